import pg from 'pg';
import { sleep } from '../helpers/common';
import { describeWith } from '../helpers/optional-services';
import { aNewPlant } from '../helpers/plants';
import { plantRows } from '../helpers/postgres';
import type { ServerProcess } from '../helpers/server-process';
import { openStream, type SseStream } from '../helpers/sse';
import { TOKEN } from '../helpers/test-app';
import { childPids, JSON_HEADERS, onNewConnection, workersForEach } from '../helpers/workers';

// Connection: close on each stream, so every open is a new connection the supervisor hands to the next worker.
const OTHER_TOKEN = 'other-caller-0123456789abcdefghijklmnopqrstuvwxyz';
const STREAM_HEADERS = { Authorization: `Bearer ${TOKEN}`, Connection: 'close' };
const openOnNewConnection = (service: ServerProcess): Promise<SseStream> => openStream(service.url, '/plants/events', STREAM_HEADERS);
const refusal = (stream: SseStream) => ({ status: stream.status, retryAfter: stream.headers['retry-after'], error: (stream.body as { error?: number } | undefined)?.error });

/** Opens a stream until one is accepted (a slot freed a moment after its stream ended), within `timeoutMs`. */
async function openWhenFree(service: ServerProcess, timeoutMs: number): Promise<SseStream> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const stream = await openOnNewConnection(service);
    if (stream.status === 200 || Date.now() > until) return stream;
    await sleep(100);
  }
}

/** Another session holding the plants table's write lock: a create waits on it, in flight, until release. */
async function lockPlantWrites(url: string): Promise<() => Promise<void>> {
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE plants IN SHARE ROW EXCLUSIVE MODE');
  return async () => {
    await locker.query('ROLLBACK');
    await locker.end();
  };
}

const ended = (stream: SseStream): Promise<boolean> => Promise.race([stream.ended.then(() => true), sleep(500).then(() => false)]);

describeWith('postgres', 'limits per machine at WORKERS=3 on PostgreSQL', (server) => {
  const workers = workersForEach(server);

  it('when EVENTS_MAX_STREAMS=2 streams are open on two workers, then a third on the third worker answers 503 50320 with Retry-After, and once one closes a new one opens', async () => {
    const service = await workers.start({ WORKERS: '3', EVENTS_MAX_STREAMS: '2' });
    const first = await openOnNewConnection(service);
    const second = await openOnNewConnection(service);

    const third = await openOnNewConnection(service);
    first.close();
    const after = await openWhenFree(service, 5000);

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(refusal(third)).toEqual({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) as unknown, error: 50320 });
    expect(after.status).toBe(200);
    second.close();
    after.close();
  });

  it('when a worker holding a stream is killed with SIGKILL, then the supervisor frees its slot and a new stream opens', async () => {
    const service = await workers.start({ WORKERS: '3', EVENTS_MAX_STREAMS: '2' });
    const streams = [await openOnNewConnection(service), await openOnNewConnection(service)];
    const refused = await openOnNewConnection(service);

    // Workers are killed one at a time until a stream ends: that worker held it, and could give nothing back.
    for (const pid of childPids(service.child.pid ?? 0)) {
      process.kill(pid, 'SIGKILL');
      if ((await Promise.all(streams.map(ended))).includes(true)) break;
    }
    const after = await openWhenFree(service, 10_000);

    expect(refused.status).toBe(503);
    expect(after.status).toBe(200);
    for (const stream of [...streams, after]) stream.close();
  }, 30_000);

  it('when a keyed create is in flight on one worker, then the same key on another worker answers 409 40902 with Retry-After at once, and the first completes', async () => {
    const service = await workers.start({ WORKERS: '3' });
    const plant = aNewPlant();
    const keyed = { headers: { ...JSON_HEADERS, 'Idempotency-Key': `machine-${String(plant.id)}` }, body: JSON.stringify(plant) };
    const release = await lockPlantWrites(workers.url);
    const first = onNewConnection(service.url, keyed);
    await sleep(500);

    const second = await onNewConnection(service.url, { ...keyed, timeoutMs: 3000 });
    await release();
    const done = await first;
    await sleep(300);
    const served = service.lines.filter((line) => line.msg === 'request' && line.method === 'POST');

    expect({ status: second.status, error: (second.body as { error: number }).error, retryAfter: second.headers['retry-after'] }).toEqual({ status: 409, error: 40902, retryAfter: '1' });
    expect(done.status).toBe(200);
    expect(served.map((line) => line.status).sort()).toEqual([200, 409]);
    expect(new Set(served.map((line) => line.worker)).size).toBe(2);
    expect(plantRows(workers.url, `id = ${String(plant.id)}`)).toHaveLength(1);
  });

  it('when another caller sends the same Idempotency-Key while the first is in flight on another worker, then it is no 409: a key is held per caller and both are created', async () => {
    const service = await workers.start({ WORKERS: '3', AUTH_TOKENS: `${TOKEN},${OTHER_TOKEN}` });
    const [mine, theirs] = [aNewPlant(), aNewPlant()];
    const key = `machine-${String(mine.id)}`;
    const release = await lockPlantWrites(workers.url);
    const first = onNewConnection(service.url, { headers: { ...JSON_HEADERS, 'Idempotency-Key': key }, body: JSON.stringify(mine) });
    await sleep(500);

    const second = onNewConnection(service.url, { headers: { ...JSON_HEADERS, Authorization: `Bearer ${OTHER_TOKEN}`, 'Idempotency-Key': key }, body: JSON.stringify(theirs) });
    await sleep(500);
    await release();
    const answers = await Promise.all([first, second]);
    await sleep(300);
    const served = service.lines.filter((line) => line.msg === 'request' && line.method === 'POST');

    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(new Set(served.map((line) => line.worker)).size).toBe(2);
    expect(plantRows(workers.url, `id IN (${String(mine.id)}, ${String(theirs.id)})`)).toHaveLength(2);
  });
});
