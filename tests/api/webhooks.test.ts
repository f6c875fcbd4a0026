import Ajv2020 from 'ajv/dist/2020';
import Database from 'better-sqlite3';
import { aNewPlant, uniqueId } from '../helpers/plants';
import { closedPort, sleep, WEBHOOK_SECRET } from '../helpers/webhook-receiver';
import { webhookFixtures } from '../helpers/webhook-fixtures';
import { defaultStore, dropTable, postPlant, storedEvents, storedPlant } from '../helpers/test-app';

const { receiver, appWith, app: appOf } = webhookFixtures();

const outboxRows = storedEvents;

// A second SQLite connection holding the lock or dropping the outbox table: faults of the SQLite file.
const sqliteOnly = defaultStore() === 'postgres' ? it.skip : it;
// On PostgreSQL the same fault is a missing relation (42P01): a bug, so 500, and the statement rolls back as a whole.
const postgresOnly = defaultStore() === 'postgres' ? it : it.skip;

describe('the new-plant webhook', () => {
  it('when a plant is created, then the subscriber gets it once, signed, with the exact int64 id in the body', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const before = Math.floor(Date.now() / 1000);

    const response = await postPlant(app, '{"id": 9007199254740993, "name": "Ficus lyrata", "tag": "indoor \\"big\\" ✓"}');
    await hooks.waitFor((all) => all.length === 1);
    await sleep(400);

    expect(response.status).toBe(200);
    expect(hooks.deliveries).toEqual([
      {
        id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
        timestamp: expect.any(Number),
        signature: expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
        contentType: 'application/json',
        body: '{"id":9007199254740993,"name":"Ficus lyrata","tag":"indoor \\"big\\" ✓"}',
        verified: true,
        receivedAt: expect.any(Number),
      },
    ]);
    expect(hooks.deliveries[0]?.timestamp).toBeGreaterThanOrEqual(before);
    expect(hooks.deliveries[0]?.timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    await sleep(300);
    expect(outboxRows(app)).toEqual([
      expect.objectContaining({ event_id: hooks.deliveries[0]?.id, plant_id: 9007199254740993n, status: 'delivered', attempts: 1n, last_error: null }),
    ]);
  });

  it('when a plant has no tag, then the body has no tag either', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const id = uniqueId();

    await postPlant(app, { id, name: 'Pilea' });
    await hooks.waitFor((all) => all.length === 1);

    expect(JSON.parse(hooks.deliveries[0]?.body ?? '')).toEqual({ id, name: 'Pilea' });
  });

  it('when two subscribers are configured, then each gets its own event for the plant', async () => {
    const first = await receiver();
    const second = await receiver();
    const app = await appWith(`${first.url},${second.url}`);
    const plant = aNewPlant();

    await postPlant(app, plant);
    await first.waitFor((all) => all.length === 1);
    await second.waitFor((all) => all.length === 1);

    expect(JSON.parse(first.deliveries[0]?.body ?? '')).toEqual(plant);
    expect(JSON.parse(second.deliveries[0]?.body ?? '')).toEqual(plant);
    expect(first.deliveries[0]?.id).not.toBe(second.deliveries[0]?.id);
  });

  it('when the identical plant is sent again, or the id comes with another name, then nothing more is delivered', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const plant = aNewPlant();
    await postPlant(app, plant);
    await hooks.waitFor((all) => all.length === 1);

    const retry = await postPlant(app, plant);
    const conflict = await postPlant(app, { ...plant, name: 'Another name' });
    await sleep(700);

    expect([retry.status, conflict.status, conflict.body.error]).toEqual([200, 400, 40007]);
    expect(hooks.deliveries).toHaveLength(1);
    expect(outboxRows(app)).toHaveLength(1);
  });

  it('when the receiver answers 500 then 200, then it gets the same webhook-id twice, each validly signed, and one line logs the failure', async () => {
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? 500 : 200) });
    const app = await appWith(hooks.url);
    const plant = aNewPlant();

    await postPlant(app, plant);
    await hooks.waitFor((all) => all.length === 2);
    await sleep(300);

    const [first, second] = hooks.deliveries;
    expect(hooks.deliveries).toHaveLength(2);
    expect(second?.id).toBe(first?.id);
    expect([first?.verified, second?.verified]).toEqual([true, true]);
    expect(second?.body).toBe(first?.body);
    const failures = app.logs.filter((line) => line.msg.startsWith('webhook attempt failed'));
    expect(failures).toEqual([
      expect.objectContaining({ level: 40, eventId: first?.id, subscriber: `127.0.0.1:${hooks.port}`, attempt: 1, status: 500, nextAttemptAt: expect.any(String) }),
    ]);
    const logText = app.rawLogs.join('');
    expect(logText).not.toContain(WEBHOOK_SECRET.slice('whsec_'.length));
    expect(logText).not.toContain(first?.signature.slice(3));
    expect(logText).not.toContain(second?.signature.slice(3));
    expect(outboxRows(app)).toEqual([expect.objectContaining({ status: 'delivered', attempts: 2n })]);
  });

  it('when an attempt times out while newer events are delivered, then its retry, due before them, is still made', async () => {
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? 'hang' : 200) });
    const app = await appWith(hooks.url, { WEBHOOK_TIMEOUT_MS: '400', WEBHOOK_RETRY_SCHEDULE: '50ms' });
    const first = aNewPlant();

    await postPlant(app, first);
    await hooks.waitFor((all) => all.length === 1);
    // Newer events are claimed and delivered while the first attempt hangs; its retry falls due behind them.
    const others = [];
    for (let i = 0; i < 16; i += 1) {
      others.push(aNewPlant());
      await postPlant(app, others[i]);
      await sleep(40);
    }
    const deliveries = await hooks.waitFor((all) => all.length === 18);

    const bodies = deliveries.map((delivery) => delivery.body);
    expect(bodies.filter((body) => body === JSON.stringify(first))).toHaveLength(2);
    expect(new Set(bodies)).toEqual(new Set([first, ...others].map((plant) => JSON.stringify(plant))));
    expect(deliveries.every((delivery) => delivery.verified)).toBe(true);
  });

  it('when the receiver is down during the create, then it gets the event once it is up', async () => {
    const port = await closedPort();
    const app = await appWith(`http://127.0.0.1:${port}/hooks`, { WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms' });
    const plant = aNewPlant();

    const response = await postPlant(app, plant);
    // The first attempt is made at once after the commit; on a loaded machine "at once" can take a while.
    const firstFailure = () => app.logs.find((line) => line.msg.startsWith('webhook attempt failed'));
    for (const until = performance.now() + 5000; firstFailure() === undefined && performance.now() < until; ) await sleep(20);
    const refused = firstFailure();
    const hooks = await receiver({ port });
    await hooks.waitFor((all) => all.length === 1);
    await sleep(800);

    expect(response.status).toBe(200);
    expect(refused).toMatchObject({ subscriber: `127.0.0.1:${port}`, attempt: 1, error: 'ECONNREFUSED', nextAttemptAt: expect.any(String) });
    expect(hooks.deliveries).toHaveLength(1);
    expect(hooks.deliveries[0]).toMatchObject({ verified: true, body: JSON.stringify(plant) });
  });

  it('when the subscriber refuses connections, then its other events wait without an attempt and all go out once a probe gets through', async () => {
    const port = await closedPort();
    const app = await appWith(`http://127.0.0.1:${port}/hooks`, { WEBHOOK_RETRY_SCHEDULE: '1s,10s', WEBHOOK_CONNECTIONS: '1' });

    await Promise.all(Array.from({ length: 5 }, () => postPlant(app, aNewPlant())));
    await sleep(500);
    const failedWhileDown = app.logs.filter((line) => line.msg.startsWith('webhook attempt failed'));
    const rowsWhileDown = outboxRows(app).map((row) => [row.status, row.attempts]);
    const hooks = await receiver({ port });
    await hooks.waitFor((all) => new Set(all.map((delivery) => delivery.id)).size === 5);
    await sleep(300);

    expect(failedWhileDown.map((line) => [line.error, line.attempt])).toEqual([['ECONNREFUSED', 1]]);
    expect(rowsWhileDown.filter(([, attempts]) => attempts === 0n)).toHaveLength(4);
    expect(app.logs.filter((line) => line.msg.startsWith('webhook subscriber')).map((line) => [line.level, line.msg.split(';')[0], line.subscriber])).toEqual([
      [40, 'webhook subscriber unreachable', `127.0.0.1:${port}`],
      [30, 'webhook subscriber reachable again', `127.0.0.1:${port}`],
    ]);
    expect(hooks.deliveries.every((delivery) => delivery.verified)).toBe(true);
    expect(outboxRows(app).map((row) => row.status)).toEqual(Array(5).fill('delivered'));
  });

  it('when the subscriber stays unreachable past the retry window, then its waiting events are marked failed, kept and logged', async () => {
    const port = await closedPort();
    const app = await appWith(`http://127.0.0.1:${port}/hooks`, { WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_CONNECTIONS: '1' });

    await Promise.all(Array.from({ length: 4 }, () => postPlant(app, aNewPlant())));
    for (const until = performance.now() + 5000; outboxRows(app).some((row) => row.status !== 'failed') && performance.now() < until; ) await sleep(50);

    const rows = outboxRows(app);
    const expired = rows.filter((row) => row.last_error === 'ECONNREFUSED; retry window passed while unreachable');
    expect(rows.map((row) => row.status)).toEqual(Array(4).fill('failed'));
    expect(expired.length).toBeGreaterThanOrEqual(2);
    expect(expired.every((row) => row.attempts < 2n)).toBe(true);
    const expiredLines = app.logs.filter((line) => line.msg.startsWith('webhook event not delivered: its retry window passed'));
    expect(expiredLines.map((line) => [line.level, line.eventId, line.error]).sort()).toEqual(expired.map((row) => [50, row.event_id, 'ECONNREFUSED']).sort());
  });

  it('when every attempt fails, then after the last one the event is marked failed, kept and logged', async () => {
    const hooks = await receiver({ answer: () => 503 });
    const app = await appWith(hooks.url, { WEBHOOK_RETRY_SCHEDULE: '50ms,50ms' });

    await postPlant(app, aNewPlant());
    await hooks.waitFor((all) => all.length === 3);
    await sleep(600);

    expect(hooks.deliveries).toHaveLength(3);
    expect(new Set(hooks.deliveries.map((delivery) => delivery.id)).size).toBe(1);
    expect(outboxRows(app)).toEqual([expect.objectContaining({ status: 'failed', attempts: 3n, last_error: 'status 503' })]);
    expect(app.logs.filter((line) => line.msg.startsWith('webhook attempt failed')).map((line) => [line.level, line.attempt, line.nextAttemptAt])).toEqual([
      [40, 1, expect.any(String)],
      [40, 2, expect.any(String)],
      [50, 3, null],
    ]);
  });

  it('when the receiver answers with a redirect, then it is not followed but retried', async () => {
    const elsewhere = await receiver();
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? { status: 307, headers: { Location: elsewhere.url } } : 200) });
    const app = await appWith(hooks.url);

    await postPlant(app, aNewPlant());
    await hooks.waitFor((all) => all.length === 2);
    await sleep(300);

    expect(app.logs.find((line) => line.msg.startsWith('webhook attempt failed'))).toMatchObject({ status: 307 });
    expect(elsewhere.deliveries).toEqual([]);
  });

  it('when the receiver verifies with another secret, then verification fails there (the signature means something)', async () => {
    const hooks = await receiver({ secret: `whsec_${Buffer.from('some-other-secret-of-enough-bytes!!').toString('base64')}` });
    const app = await appWith(hooks.url);

    await postPlant(app, aNewPlant());
    await hooks.waitFor((all) => all.length === 1);

    expect(hooks.deliveries[0]?.verified).toBe('No matching signature found');
  });

  it('when the subscriber never answers, then creates are not slowed and it holds at most WEBHOOK_CONNECTIONS connections', async () => {
    const hooks = await receiver({ answer: () => 'hang' });
    const app = await appWith(hooks.url, { WEBHOOK_CONNECTIONS: '2', WEBHOOK_TIMEOUT_MS: '5000' });

    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 20; i += 1) statuses.push((await postPlant(app, aNewPlant())).status);
    const elapsed = Date.now() - started;
    await sleep(300);

    expect(statuses).toEqual(Array(20).fill(200));
    // Were a create to wait on its delivery, one alone would take the 5 s timeout.
    expect(elapsed).toBeLessThan(4000);
    expect(hooks.deliveries).toHaveLength(2);
    expect(hooks.peakConnections()).toBe(2);
  });

  it('when one subscriber never answers, then another still gets every event promptly', async () => {
    const stuck = await receiver({ answer: () => 'hang' });
    const healthy = await receiver();
    const app = await appWith(`${stuck.url},${healthy.url}`, { WEBHOOK_CONNECTIONS: '2' });
    const plants = Array.from({ length: 20 }, () => aNewPlant());

    const started = Date.now();
    for (const plant of plants) await postPlant(app, plant);
    await healthy.waitFor((all) => all.length === 20, 4000);

    expect(Date.now() - started).toBeLessThan(4000);
    expect(healthy.deliveries.map((delivery) => delivery.body).sort()).toEqual(plants.map((plant) => JSON.stringify(plant)).sort());
    expect(stuck.deliveries).toHaveLength(2);
  });

  sqliteOnly('when the create fails because the store is locked, then nothing is stored or announced', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url, { DATABASE_BUSY_TIMEOUT_MS: '100' });
    const locker = new Database(app.dbPath);
    locker.exec('BEGIN IMMEDIATE');

    const response = await postPlant(app, aNewPlant());
    locker.exec('ROLLBACK');
    locker.close();
    await sleep(500);

    expect([response.status, response.body.error]).toEqual([503, 50301]);
    expect(hooks.deliveries).toEqual([]);
    expect(outboxRows(app)).toEqual([]);
  });

  sqliteOnly('when its event cannot be written, then the plant is not stored either and the create answers 503', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const breaker = new Database(app.dbPath);
    breaker.exec('DROP TABLE webhook_outbox');
    breaker.close();
    const plant = aNewPlant();

    const response = await postPlant(app, plant);

    expect([response.status, response.body.error]).toEqual([503, 50301]);
    expect(app.inspect().prepare('SELECT count(*) AS n FROM plants WHERE id = ?').pluck().get(plant.id)).toBe(0n);
    expect(app.logs.some((line) => line.level === 50 && JSON.stringify(line).includes('no such table: webhook_outbox'))).toBe(true);
  });

  postgresOnly('when its event cannot be written (the outbox table dropped), then the plant is not stored either and the create answers 500', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    dropTable(app, 'webhook_outbox');
    const plant = aNewPlant();

    const response = await postPlant(app, plant);
    await sleep(300);

    expect([response.status, response.body.error]).toEqual([500, 50001]);
    expect(storedPlant(app, plant.id as number)).toBeUndefined();
    expect(hooks.deliveries).toEqual([]);
  });

  it('when no webhook is configured, then creates store no event', async () => {
    const app = await appOf({});

    const response = await postPlant(app, aNewPlant());

    expect(response.status).toBe(200);
    expect(outboxRows(app)).toEqual([]);
  });
});

describe('the webhook in the OpenAPI document', () => {
  it('when a real delivery arrives, then its body and headers (traceparent included) match the documented /plant/webhook', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const document = (await app.request.get('/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema(document, 'openapi.json');

    await postPlant(app, '{"id": -9223372036854775808, "name": "Aloe"}', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const [delivery] = await hooks.waitFor((all) => all.length === 1);

    const operation = document.webhooks['/plant/webhook'].post;
    expect(operation.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/NewPlant' });
    expect(Object.keys(operation.responses)).toEqual(['200']);
    const validateBody = ajv.getSchema('openapi.json#/components/schemas/NewPlant');
    expect(validateBody?.(JSON.parse(delivery?.body ?? ''))).toBe(true);
    const headers = {
      'webhook-id': delivery?.id,
      'webhook-timestamp': delivery?.timestamp,
      'webhook-signature': delivery?.signature,
      traceparent: delivery?.traceparent,
    };
    for (const parameter of operation.parameters as { name: keyof typeof headers; schema: object }[]) {
      expect({ header: parameter.name, valid: ajv.validate(parameter.schema, headers[parameter.name]) }).toEqual({ header: parameter.name, valid: true });
    }
    expect((operation.parameters as { name: string; required: boolean }[]).map((parameter) => [parameter.name, parameter.required])).toEqual([
      ['webhook-id', true],
      ['webhook-timestamp', true],
      ['webhook-signature', true],
      ['traceparent', false],
    ]);
  });
});
