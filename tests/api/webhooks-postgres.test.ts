import { SHARED_TENANT } from '../../src/tenant';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { loadConfig } from '../../src/config';
import { loadPostgresMigrations, migratePostgres } from '../../src/db/migrate.postgres';
import { createMetrics } from '../../src/metrics';
import { applyWrites } from '../../src/plants/plant.write.postgres';
import { PostgresPlantRepository } from '../../src/plants/plant.repository.postgres';
import { newPlantSchema } from '../../src/plants/plant.schemas';
import { createPostgresWebhooks, type PostgresWebhooks } from '../../src/webhooks';
import { describeWith } from '../helpers/optional-services';
import { aNewPlant } from '../helpers/plants';
import { startReceiver, WEBHOOK_SECRET, type Receiver } from '../helpers/webhook-receiver';
import { sleep } from '../helpers/common';
import { captureLogs, type LogLine } from '../helpers/common';

describeWith('postgres', 'the new-plant webhook on a shared PostgreSQL outbox', (serverUrl) => {
  const database = `plants_t_${randomBytes(6).toString('hex')}`;
  let admin: Pool;
  let pools: Pool[] = [];
  const running: { stop: (timeoutMs: number) => Promise<void> }[] = [];
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    admin = new Pool({ connectionString: serverUrl, max: 1 });
    await admin.query(`CREATE DATABASE ${database}`);
    await migratePostgres({ url: urlOf(), poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 }, loadPostgresMigrations());
  });

  afterEach(async () => {
    for (const replica of running.splice(0)) await replica.stop(1000);
    for (const receiver of receivers.splice(0)) await receiver.close();
    await poolOf().query('TRUNCATE webhook_outbox, plants');
  });

  afterAll(async () => {
    for (const pool of pools) await pool.end();
    pools = [];
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  function urlOf(): string {
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    return url.toString();
  }

  function poolOf(): Pool {
    const pool = new Pool({ connectionString: urlOf(), max: 4 });
    // An idle client's error (the server ending its connection) would otherwise be thrown as unhandled.
    pool.on('error', (error) => process.stderr.write(`idle PostgreSQL client: ${error.message}\n`));
    pools.push(pool);
    return pool;
  }

  type Replica = { webhooks: PostgresWebhooks; plants: PostgresPlantRepository; pool: Pool; logs: LogLine[] };

  /** One replica: its own pool, plant repository and dispatcher over the shared outbox, wired as src/store does. */
  async function replica(url: string, env: Record<string, string> = {}, observer?: ReturnType<typeof createMetrics>['webhooks']): Promise<Replica> {
    const config = loadConfig({ AUTH_TOKENS: 'x'.repeat(32), WEBHOOK_URLS: url, WEBHOOK_SECRET, WEBHOOK_RETRY_SCHEDULE: '100ms,100ms', ...env });
    const { logs, logger } = captureLogs(config);
    const pool = poolOf();
    if (config.webhooks === undefined) throw new Error('webhooks not configured');
    const webhooks = createPostgresWebhooks(config.webhooks, pool, { logger, pollMs: 50, observer });
    const plants = new PostgresPlantRepository(pool, logger, 5000, undefined, webhooks.outbox);
    await plants.markReady();
    webhooks.start();
    running.push(webhooks);
    return { webhooks, plants, pool, logs };
  }

  async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> {
    const started = await startReceiver(options);
    receivers.push(started);
    return started;
  }

  /** Creates the plants through the replica's repository: one group commit, the production statement with its events. */
  async function create(target: Replica, plants: Record<string, unknown>[], traces: ({ traceId: string; flags: string } | undefined)[] = []) {
    await Promise.all(plants.map((plant, index) => target.plants.create(SHARED_TENANT, newPlantSchema.parse(plant), { trace: traces[index] })));
  }

  /** The production write path for one create, inside a transaction that then rolls back. */
  async function createRolledBack(target: Replica, plant: Record<string, unknown>) {
    const parsed = newPlantSchema.parse(plant);
    const client = await target.pool.connect();
    try {
      await client.query('BEGIN');
      await applyWrites(client, [{ write: { kind: 'create', plant: parsed }, tenant: SHARED_TENANT }], Date.now(), target.webhooks.outbox);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  }

  it('when a plant is created, then it is delivered once, signed, with the exact id', async () => {
    const hooks = await receiver();
    const one = await replica(hooks.url);

    await create(one, [{ id: 9223372036854775807n, name: 'Ficus', tag: 'big' }]);
    await hooks.waitFor((all) => all.length === 1);
    await sleep(400);

    expect(hooks.deliveries).toEqual([expect.objectContaining({ body: '{"id":9223372036854775807,"name":"Ficus","tag":"big"}', verified: true })]);
    const { rows } = await one.pool.query('SELECT status, attempts, plant_id FROM webhook_outbox');
    expect(rows).toEqual([{ status: 'delivered', attempts: 1, plant_id: '9223372036854775807' }]);
  });

  it('when a plant comes with its create\'s trace, then its delivery carries that trace id with a new span id; one without carries none', async () => {
    const hooks = await receiver();
    const one = await replica(hooks.url);
    const traced = aNewPlant();
    const untraced = aNewPlant();

    await create(one, [traced, untraced], [{ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', flags: '01' }, undefined]);
    const deliveries = await hooks.waitFor((all) => all.length === 2);

    const headerOf = (plant: Record<string, unknown>) => deliveries.find((delivery) => delivery.body === JSON.stringify(plant))?.traceparent;
    expect(headerOf(traced)).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(headerOf(untraced)).toBeUndefined();
  });

  it('when events are pending, then the backlog gauge counts the whole shared outbox and deliveries are counted by outcome', async () => {
    const hooks = await receiver({ answer: () => 503 });
    const metrics = createMetrics();
    const one = await replica(hooks.url, { WEBHOOK_RETRY_SCHEDULE: '30s' }, metrics.webhooks);

    await create(one, [aNewPlant(), aNewPlant(), aNewPlant()]);
    await hooks.waitFor((all) => all.length === 3);
    await sleep(200);
    const text = await metrics.registry.metrics();

    expect(text).toMatch(/^plants_webhook_backlog_events 3$/m);
    expect(text).toMatch(/^plants_webhook_attempts_total\{outcome="failed_status"\} 3$/m);
  });

  it('when the transaction rolls back, then nothing is stored or delivered', async () => {
    const hooks = await receiver();
    const one = await replica(hooks.url);

    await createRolledBack(one, aNewPlant());
    await sleep(500);

    expect(hooks.deliveries).toEqual([]);
    expect((await one.pool.query('SELECT (SELECT count(*)::int FROM webhook_outbox) AS events, (SELECT count(*)::int FROM plants) AS plants')).rows).toEqual([
      { events: 0, plants: 0 },
    ]);
  });

  it('when the receiver answers 500 then 200, then the same webhook-id comes twice and the event ends delivered', async () => {
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? 500 : 200) });
    const one = await replica(hooks.url);

    await create(one, [aNewPlant()]);
    await hooks.waitFor((all) => all.length === 2);
    await sleep(400);

    expect(hooks.deliveries[1]?.id).toBe(hooks.deliveries[0]?.id);
    expect((await one.pool.query('SELECT status, attempts, last_error FROM webhook_outbox')).rows).toEqual([
      { status: 'delivered', attempts: 2, last_error: null },
    ]);
  });

  it('when two replicas dispatch from one outbox, then the receiver gets each of 300 events exactly once', async () => {
    const hooks = await receiver({ answer: () => sleep(Math.floor(Math.random() * 5)).then(() => 200) });
    const first = await replica(hooks.url);
    const second = await replica(hooks.url);
    const plants = Array.from({ length: 300 }, () => aNewPlant());

    for (let i = 0; i < plants.length; i += 30) await create(i % 60 === 0 ? first : second, plants.slice(i, i + 30));
    await hooks.waitFor((all) => all.length >= 300, 20_000);
    await sleep(800);

    expect(hooks.deliveries).toHaveLength(300);
    expect(new Set(hooks.deliveries.map((delivery) => delivery.id)).size).toBe(300);
    expect(hooks.deliveries.map((delivery) => delivery.body).sort()).toEqual(plants.map((plant) => JSON.stringify(plant)).sort());
    expect(hooks.deliveries.every((delivery) => delivery.verified === true)).toBe(true);
    expect((await first.pool.query(`SELECT status, count(*)::int AS n FROM webhook_outbox GROUP BY status`)).rows).toEqual([{ status: 'delivered', n: 300 }]);
  });

  it('when a replica stops with an attempt in flight past its deadline, then the other replica delivers the event', async () => {
    let hang = true;
    const hooks = await receiver({ answer: () => (hang ? 'hang' : 200) });
    const leaving = await replica(hooks.url);
    await create(leaving, [aNewPlant()]);
    await hooks.waitFor((all) => all.length === 1);

    const stopping = running.shift();
    await stopping?.stop(200);
    hang = false;
    await replica(hooks.url);
    await hooks.waitFor((all) => all.length === 2);

    expect(hooks.deliveries[1]?.id).toBe(hooks.deliveries[0]?.id);
    expect(leaving.logs.some((line) => line.msg === 'webhook attempts unfinished at the drain deadline; left pending for the next start')).toBe(true);
  });
});
