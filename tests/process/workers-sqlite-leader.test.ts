import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sleep, webhookEnv } from '../helpers/fixtures';
import { aNewPlant } from '../helpers/plants';
import { startReceiver, type Delivery, type Receiver } from '../helpers/webhook-receiver';
import { childPids, JSON_HEADERS, onNewConnection, waitForLines } from '../helpers/workers';
import { quantile, startSqliteWorkers, type StartedSqliteWorkers as SqliteWorkers } from '../helpers/workers-sqlite';

const create = (workers: SqliteWorkers, plant: unknown, reqId: string) =>
  onNewConnection(workers.server.url, { headers: { ...JSON_HEADERS, 'X-Request-Id': reqId }, body: JSON.stringify(plant) });
const plantIdOf = (delivery: Delivery) => (JSON.parse(delivery.body) as { id: number }).id;
const leading = (line: Record<string, unknown>) => line.msg === 'leading: the webhook dispatcher, scheduled backups and the prunes run in this worker';

/** The worker process of slot `slot`: the supervisor forks each with its slot in the environment. */
function pidOfSlot(workers: SqliteWorkers, slot: number): number {
  const pid = childPids(workers.server.child.pid ?? 0).find((child) => readFileSync(`/proc/${child}/environ`, 'utf8').split('\0').includes(`SUPERVISED_WORKER_SLOT=${slot}`));
  if (pid === undefined) throw new Error(`no worker in slot ${slot}`);
  return pid;
}

describe('what runs once per machine at WORKERS=2 on SQLite', () => {
  let workers: SqliteWorkers | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await workers?.close();
    await receiver?.close();
    workers = receiver = undefined;
  });

  it('when plants are created on both workers, then the one leader delivers each event once', async () => {
    receiver = await startReceiver();
    workers = await startSqliteWorkers(webhookEnv(receiver.url));
    const plants = Array.from({ length: 40 }, () => aNewPlant());

    const answers = await Promise.all(plants.map((plant, index) => create(workers as SqliteWorkers, plant, `create-${index}`)));
    await receiver.waitFor((deliveries) => deliveries.length >= plants.length, 10_000);
    await sleep(1500);
    const served = workers.server.lines.filter((line) => line.msg === 'request' && String(line.reqId).startsWith('create-'));

    expect(answers.map((answer) => answer.status)).toEqual(plants.map(() => 200));
    expect(new Set(served.map((line) => line.worker))).toEqual(new Set([1, 2]));
    expect(receiver.deliveries).toHaveLength(plants.length);
    expect(new Set(receiver.deliveries.map((delivery) => delivery.id)).size).toBe(plants.length);
    expect(receiver.deliveries.map(plantIdOf).sort()).toEqual(plants.map((plant) => plant.id as number).sort());
    expect(receiver.deliveries.every((delivery) => delivery.verified === true)).toBe(true);
    expect(workers.server.lines.filter(leading)).toHaveLength(1);
  }, 60_000);

  it('when plants are created on the worker that does not lead, then the leader delivers each at once, not at its next 250 ms poll', async () => {
    receiver = await startReceiver();
    workers = await startSqliteWorkers(webhookEnv(receiver.url, { WEBHOOK_RETRY_SCHEDULE: '1s,1s' }));
    const leader = Number((await workers.server.waitForLine(leading)).worker);

    const lags: number[] = [];
    for (let index = 0; index < 40; index += 1) {
      const plant = aNewPlant();
      const reqId = `create-${index}`;
      expect((await create(workers, plant, reqId)).status).toBe(200);
      const answered = Date.now();
      const [delivery] = (await receiver.waitFor((deliveries) => deliveries.some((each) => plantIdOf(each) === plant.id), 5000)).filter((each) => plantIdOf(each) === plant.id);
      const by = (await workers.server.waitForLine((line) => line.msg === 'request' && line.reqId === reqId)).worker;
      if (by !== leader) lags.push(Math.max(0, (delivery?.receivedAt ?? Number.NaN) - answered));
    }
    const figures = { n: lags.length, p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: Math.max(...lags) };
    process.stdout.write(`webhook delivery lag from the other worker's create (ms after the answer): ${JSON.stringify(figures)}\n`);

    expect(lags.length).toBeGreaterThan(10);
    expect(figures.p50).toBeLessThan(50);
  }, 60_000);

  it('when the leader (slot 1) is killed with attempts in flight, then slot 2 leads for good and resends them with the same webhook-id', async () => {
    let hanging = true;
    receiver = await startReceiver({ answer: () => (hanging ? 'hang' : 200) });
    workers = await startSqliteWorkers(webhookEnv(receiver.url));
    const leader = Number((await workers.server.waitForLine(leading)).worker);
    const plants = Array.from({ length: 5 }, () => aNewPlant());
    for (const [index, plant] of plants.entries()) expect((await create(workers, plant, `create-${index}`)).status).toBe(200);
    await receiver.waitFor((deliveries) => deliveries.length >= plants.length, 10_000);
    const first = receiver.deliveries.map((delivery) => delivery.id);

    hanging = false;
    process.kill(pidOfSlot(workers, leader), 'SIGKILL');
    await waitForLines(workers.server, leading, 2, 10_000);
    await receiver.waitFor((deliveries) => deliveries.length >= 2 * plants.length, 10_000);
    const next = workers.server.lines.filter(leading)[1];
    // The killed slot comes back and serves, and does not take the lead back.
    await waitForLines(workers.server, (line) => line.msg === 'worker listening' && line.worker === leader, 2, 10_000);
    await sleep(300);

    expect(leader).toBe(1);
    expect(next?.worker).toBe(2);
    expect(workers.server.lines.filter(leading)).toHaveLength(2);
    expect(new Set(first).size).toBe(plants.length);
    expect(receiver.deliveries.slice(plants.length).map((delivery) => delivery.id).sort()).toEqual([...first].sort());
  }, 60_000);

  it('when change events pass EVENTS_RETENTION, then the leader alone prunes them, and they are gone', async () => {
    workers = await startSqliteWorkers({ LOG_LEVEL: 'debug', EVENTS_RETENTION: '1s' });
    const leader = Number((await workers.server.waitForLine(leading)).worker);

    // Creates on both workers (a new connection each: round-robin) for about four prune intervals.
    for (let index = 0; index < 40; index += 1) {
      expect((await create(workers, aNewPlant(), `create-${index}`)).status).toBe(200);
      await sleep(100);
    }
    await sleep(2500);
    const served = workers.server.lines.filter((line) => line.msg === 'request' && String(line.reqId).startsWith('create-'));
    const pruned = workers.server.lines.filter((line) => line.msg === 'change feed pruned');
    const left = new Database(workers.file, { readonly: true });
    const events = (left.prepare('SELECT count(*) AS n FROM plant_events').get() as { n: number }).n;
    left.close();

    expect(new Set(served.map((line) => line.worker))).toEqual(new Set([1, 2]));
    expect(pruned.length).toBeGreaterThan(1);
    expect(new Set(pruned.map((line) => line.worker))).toEqual(new Set([leader]));
    expect(events).toBe(0);
  }, 60_000);

  it('when BACKUP_INTERVAL is 1s, then one worker writes one backup per interval, not one per worker', async () => {
    const backups = path.join(`${process.env.TMPDIR ?? '/tmp'}`, `h36-backups-${process.pid}-${Date.now()}`);
    mkdirSync(backups);
    workers = await startSqliteWorkers({ BACKUP_DIR: backups, BACKUP_INTERVAL: '1s', BACKUP_KEEP: '10' });

    await waitForLines(workers.server, (line) => line.msg === 'backup written', 4, 20_000);
    const written = workers.server.lines.filter((line) => line.msg === 'backup written');
    const gaps = written.slice(1).map((line, index) => Number(line.time) - Number(written[index]?.time));

    expect(new Set(written.map((line) => line.worker)).size).toBe(1);
    expect(Math.min(...gaps)).toBeGreaterThan(800);
  }, 60_000);
});
