import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { perTest, webhookEnv } from '../helpers/fixtures';
import { uniqueId } from '../helpers/plants';
import { actingAs, as, tenantEnv, tenantTokenFileForAll } from '../helpers/tenant-tokens';
import type { TestApp } from '../helpers/test-app';
import { WEBHOOK_SECRET } from '../helpers/webhook-receiver';

// Webhooks with tenants on: each delivery names its tenant in webhook-tenant (percent-encoded), the body stays the
// contract's, the signature verifies with standardwebhooks as a subscriber checks it. Alice and bob write under
// the same ids, so a delete's body ({"id"}) is the same for both and only the header tells a subscriber whose it is.
const tokens = tenantTokenFileForAll();
// The app (perTest) closes before its subscriber: that afterEach is registered first.
const each = perTest();
let hooks: Subscriber;
beforeEach(async () => {
  hooks = await subscriber();
});
afterEach(() => hooks.close());

type Delivery = { type: string | undefined; tenant: string | undefined; body: string; verified: boolean };
type Subscriber = { url: string; deliveries: Delivery[]; waitFor: (count: number) => Promise<Delivery[]>; close: () => Promise<void> };

/** A subscriber that answers 200 and keeps each delivery's type, tenant header, body and whether it verified. */
async function subscriber(): Promise<Subscriber> {
  const verifier = new Webhook(WEBHOOK_SECRET);
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const header = (name: string) => (typeof req.headers[name] === 'string' ? req.headers[name] : undefined);
      let verified = true;
      try {
        verifier.verify(body, { 'webhook-id': header('webhook-id') ?? '', 'webhook-timestamp': header('webhook-timestamp') ?? '', 'webhook-signature': header('webhook-signature') ?? '' });
      } catch {
        verified = false;
      }
      deliveries.push({ type: header('webhook-event-type'), tenant: header('webhook-tenant'), body, verified });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const waitFor = async (count: number): Promise<Delivery[]> => {
    for (const deadline = Date.now() + 10_000; deliveries.length < count; ) {
      if (Date.now() > deadline) throw new Error(`${deliveries.length} of ${count} deliveries: ${JSON.stringify(deliveries)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return deliveries;
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    waitFor,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const json = { 'Content-Type': 'application/json' };
type Headers = Record<string, string>;
const create = (app: TestApp, who: Headers, plant: Record<string, unknown>) => app.request.post('/plants').set({ ...json, ...who }).send(JSON.stringify(plant));
const patch = (app: TestApp, who: Headers, id: number, body: unknown) => app.request.patch(`/plants/${id}`).set({ ...json, ...who }).send(JSON.stringify(body));
const remove = (app: TestApp, who: Headers, id: number) => app.request.delete(`/plants/${id}`).set(who);
const byTenant = (deliveries: Delivery[]) =>
  deliveries
    .map(({ type, tenant, body, verified }) => ({ type, tenant: tenant === undefined ? undefined : decodeURIComponent(tenant), body, verified }))
    .sort((a, b) => `${a.type ?? ''}${a.tenant ?? ''}`.localeCompare(`${b.type ?? ''}${b.tenant ?? ''}`));

const appWith = (subscribed: Subscriber, extra: Record<string, string> = {}): Promise<TestApp> =>
  each.app(tenantEnv(tokens, webhookEnv(subscribed.url, { WEBHOOK_EVENTS: 'plant.created,plant.updated,plant.deleted', ...extra })));

describe('webhooks in two tenants', () => {
  it('when alice and bob create, edit and delete under one id, then each delivery names its tenant, signed, bodies as the contract', async () => {
    const app = await appWith(hooks);
    const id = uniqueId();

    for (const caller of ['alice', 'bob'] as const) await create(app, as(caller), { id, name: `Fern of ${caller}` });
    for (const caller of ['bob', 'alice'] as const) await patch(app, as(caller), id, { tag: caller });
    for (const caller of ['alice', 'bob'] as const) await remove(app, as(caller), id);
    const deliveries = await hooks.waitFor(6);

    expect(byTenant(deliveries).map(({ type, tenant, verified }) => ({ type, tenant, verified }))).toEqual([
      { type: 'plant.created', tenant: 'alice', verified: true },
      { type: 'plant.created', tenant: 'bob', verified: true },
      { type: 'plant.deleted', tenant: 'alice', verified: true },
      { type: 'plant.deleted', tenant: 'bob', verified: true },
      { type: 'plant.updated', tenant: 'alice', verified: true },
      { type: 'plant.updated', tenant: 'bob', verified: true },
    ]);
    const bodies = byTenant(deliveries).map(({ body }) => JSON.parse(body) as Record<string, unknown>);
    expect(bodies.slice(0, 4)).toEqual([
      { id, name: 'Fern of alice' },
      { id, name: 'Fern of bob' },
      { type: 'plant.deleted', data: { id } },
      { type: 'plant.deleted', data: { id } },
    ]);
    expect(bodies.slice(4).map((body) => [body.type, (body.data as { name: string }).name, (body.data as { tag: string }).tag])).toEqual([
      ['plant.updated', 'Fern of alice', 'alice'],
      ['plant.updated', 'Fern of bob', 'bob'],
    ]);
  });

  it('when the operator writes in a tenant whose name needs encoding, then the header carries it percent-encoded', async () => {
    const app = await appWith(hooks);
    const id = uniqueId();

    expect((await create(app, actingAs('café ops'), { id, name: 'Operator fern' })).status).toBe(200);
    const [delivery] = await hooks.waitFor(1);

    expect({ tenant: delivery?.tenant, decoded: decodeURIComponent(delivery?.tenant ?? ''), verified: delivery?.verified }).toEqual({
      tenant: 'caf%C3%A9%20ops',
      decoded: 'café ops',
      verified: true,
    });
  });

  it("when TENANT_DEFAULT names alice (her plants stored in the shared tenant), then her deliveries still name her, and bob's him", async () => {
    const app = await appWith(hooks, { TENANT_DEFAULT: 'alice' });
    const id = uniqueId();

    for (const caller of ['alice', 'bob'] as const) await create(app, as(caller), { id, name: `Fern of ${caller}` });
    const deliveries = await hooks.waitFor(2);

    expect(byTenant(deliveries).map(({ tenant, body }) => [tenant, (JSON.parse(body) as { name: string }).name])).toEqual([
      ['alice', 'Fern of alice'],
      ['bob', 'Fern of bob'],
    ]);
  });
});
