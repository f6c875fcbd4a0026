import { aNewPlant } from '../helpers/plants';
import { closedPort, WEBHOOK_SECRET } from '../helpers/webhook-receiver';
import { perTest } from '../helpers/fixtures';
import { postPlant, storedEvents } from '../helpers/test-app';
import { sleep } from '../helpers/common';
import { perDispatcher } from '../helpers/test-workers';

const ownCircuit = perDispatcher('the circuit is each dispatcher\'s own: on PostgreSQL every worker dispatches and opens its own, as replicas do');

const { receiver, appWith } = perTest();

const outboxRows = storedEvents;

describe('webhook retries and unreachable subscribers', () => {
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

  ownCircuit.it('when the subscriber refuses connections, then its other events wait without an attempt and all go out once a probe gets through', async () => {
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

  ownCircuit.it('when the subscriber stays unreachable past the retry window, then its waiting events are marked failed, kept and logged', async () => {
    const port = await closedPort();
    const app = await appWith(`http://127.0.0.1:${port}/hooks`, { WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_CONNECTIONS: '1' });

    await Promise.all(Array.from({ length: 4 }, () => postPlant(app, aNewPlant())));
    for (const until = performance.now() + 5000; outboxRows(app).some((row) => row.status !== 'failed') && performance.now() < until; ) await sleep(50);

    const rows = outboxRows(app);
    const expired = rows.filter((row) => row.last_error === 'ECONNREFUSED; retry window passed while unreachable');
    expect(rows.map((row) => row.status)).toEqual(Array(4).fill('failed'));
    expect(expired.length).toBeGreaterThanOrEqual(2);
    expect(expired.every((row) => row.attempts < 2n)).toBe(true);
    const isExpiredLine = (line: { msg: string }) => line.msg.startsWith('webhook event not delivered: its retry window passed');
    // The rows are committed before their lines are written; at several workers the lines reach app.logs through a pipe.
    for (const until = performance.now() + 5000; app.logs.filter(isExpiredLine).length < expired.length && performance.now() < until; ) await sleep(20);
    const expiredLines = app.logs.filter(isExpiredLine);
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
});
