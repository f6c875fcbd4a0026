import { aNewPlant } from '../helpers/plants';
import { sleep } from '../helpers/common';
import { perTest } from '../helpers/fixtures';
import { WEBHOOK_SECRET } from '../helpers/webhook-receiver';
import { postPlant, storedEvents, type TestApp } from '../helpers/test-app';

const { receiver, app: appFrom } = perTest();

const OLD = WEBHOOK_SECRET;
const NEW = `whsec_${Buffer.from('the-next-plant-store-webhook-secret!').toString('base64')}`;
/** Until the outbox says every event is delivered: the subscriber's 200 reached the service. */
async function allDelivered(app: TestApp): Promise<void> {
  for (const until = performance.now() + 5000; performance.now() < until; await sleep(20)) {
    if (storedEvents(app).every((event) => event.status === 'delivered')) return;
  }
}

const env = (url: string, secret: string) => ({ WEBHOOK_URLS: url, WEBHOOK_SECRET: secret, WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms' });

describe('webhook secret rotation (WEBHOOK_SECRET as a list)', () => {
  it('when the service signs with the old and the new secret, then a subscriber verifies with the old one, then with the new one, and no delivery fails', async () => {
    const before = await receiver({ secret: OLD });
    const app = await appFrom(env(before.url, `${OLD},${NEW}`));
    const first = aNewPlant();
    const second = aNewPlant();

    await postPlant(app, first);
    await before.waitFor((all) => all.length === 1);
    await allDelivered(app);
    await before.close();
    const after = await receiver({ secret: NEW, port: before.port });
    await postPlant(app, second);
    await after.waitFor((all) => all.length === 1);

    const [old] = before.deliveries;
    const [next] = after.deliveries;
    expect([old?.body, old?.verified, next?.body, next?.verified]).toEqual([JSON.stringify(first), true, JSON.stringify(second), true]);
    expect(old?.signature).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    expect(app.logs.filter((line) => line.msg.startsWith('webhook attempt failed'))).toEqual([]);
  });

  it('when the service has moved to the new secret alone, then the old secret no longer verifies and the new one does', async () => {
    const old = await receiver({ secret: OLD, answer: () => 200 });
    const next = await receiver({ secret: NEW });
    const app = await appFrom(env(`${old.url},${next.url}`, NEW));

    await postPlant(app, aNewPlant());
    await old.waitFor((all) => all.length === 1);
    await next.waitFor((all) => all.length === 1);

    expect([old.deliveries[0]?.verified, next.deliveries[0]?.verified]).toEqual(['No matching signature found', true]);
    expect(next.deliveries[0]?.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });
});
