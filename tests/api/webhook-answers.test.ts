import { aNewPlant } from '../helpers/plants';
import { sleep } from '../helpers/common';
import { perTest } from '../helpers/fixtures';
import { postPlant, storedEvents, type TestApp } from '../helpers/test-app';

const { receiver, appWith } = perTest();

/** Until every event of the outbox is settled (delivered or failed), or 5 s. */
async function settled(app: TestApp): Promise<void> {
  for (const until = performance.now() + 5000; performance.now() < until; await sleep(20)) {
    const events = storedEvents(app);
    if (events.length > 0 && events.every((event) => event.status !== 'pending')) return;
  }
}

describe('what a subscriber\'s answer means', () => {
  it('when the subscriber answers 410 Gone, then each event is attempted once, marked failed, and one error line says so', async () => {
    const hooks = await receiver({ answer: () => 410 });
    const app = await appWith(hooks.url, { WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms' });
    const [first, second] = [aNewPlant(), aNewPlant()];

    await postPlant(app, first);
    await postPlant(app, second);
    await settled(app);
    // Long past the whole schedule: a retry would have come by now.
    await sleep(600);

    expect(hooks.deliveries.map((delivery) => delivery.body).sort()).toEqual([JSON.stringify(first), JSON.stringify(second)].sort());
    expect(storedEvents(app).map((event) => [event.status, event.attempts, event.last_error])).toEqual([
      ['failed', 1n, 'status 410'],
      ['failed', 1n, 'status 410'],
    ]);
    expect(app.logs.filter((line) => line.msg.startsWith('webhook'))).toEqual([
      expect.objectContaining({ level: 50, status: 410, attempt: 1, nextAttemptAt: null, msg: 'webhook subscriber answered 410 Gone; event marked failed without retry (remove the URL from WEBHOOK_URLS if it is gone for good)' }),
      expect.objectContaining({ level: 50, status: 410, attempt: 1 }),
    ]);
  });

  it('when the subscriber answers 200 and its body never ends, then the event is delivered once and the next one still goes out', async () => {
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? 'endless' : 200) });
    // Time enough for the 200 to arrive on a loaded machine: one that came after the timeout would be a retry.
    const app = await appWith(hooks.url, { WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms', WEBHOOK_CONNECTIONS: '1' });
    const [first, second] = [aNewPlant(), aNewPlant()];

    await postPlant(app, first);
    await hooks.waitFor((all) => all.length === 1);
    // Settled once its time is up, which closes its connection: only then is the pool's one connection free. On a
    // loaded machine a fixed sleep could end first, and the second event's attempt would time out in the queue.
    await settled(app);
    await postPlant(app, second);
    await hooks.waitFor((all) => all.length === 2);
    await settled(app);
    await sleep(300);

    expect(hooks.deliveries.map((delivery) => delivery.body)).toEqual([JSON.stringify(first), JSON.stringify(second)]);
    expect(storedEvents(app).map((event) => [event.status, event.attempts])).toEqual([
      ['delivered', 1n],
      ['delivered', 1n],
    ]);
    expect(app.logs.filter((line) => line.msg.startsWith('webhook attempt failed'))).toEqual([]);
  });
});
