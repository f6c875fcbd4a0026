import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChangeEntry } from '../../src/change-outbox';
import { loadConfig } from '../../src/config';
import { openDatabase, type Db } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import type { TenantKey } from '../../src/tenant';
import { createSqliteWebhooks, type SqliteWebhooks } from '../../src/webhooks';
import { deliver, subscriberOf } from '../../src/webhooks/delivery';
import { decodeSecret } from '../../src/webhooks/event';
import { captureLogs } from '../helpers/common';
import { perTest, webhookEnv } from '../helpers/fixtures';
import { aNewPlant } from '../helpers/plants';
import { postPlant } from '../helpers/test-app';
import { tenantHeaderOf, WEBHOOK_SECRET, type Receiver } from '../helpers/webhook-receiver';

// The webhook-tenant header (issue 35): with tenants on, each delivery names the changed plant's tenant, outside the
// signature; tenants off, no delivery has it. The tenants-on cases here drive the outbox and dispatcher over a
// migrated SQLite file of their own, as src/store wires them, to reach header values (names needing percent-encoding,
// the default tenant's name) directly; tests/api/tenants-webhooks.test.ts shows the deliveries through HTTP.
const { receiver, appWith } = perTest();

const configWith = (receiverUrl: string, tenants: Record<string, string>) =>
  loadConfig({ DATABASE_URL: 'file:unused.db', AUTH_TOKENS: 'x'.repeat(32), ...webhookEnv(receiverUrl), ...tenants });

/** The outbox and dispatcher over a fresh migrated file, with tenants as `tenants` configures them. */
function outboxOver(receiverUrl: string, tenants: Record<string, string>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-tenant-'));
  const file = path.join(dir, 'plants.db');
  const db: Db = openDatabase(file, { busyTimeoutMs: 1000 });
  migrate(db, loadMigrations());
  const config = configWith(receiverUrl, tenants);
  const webhooks: SqliteWebhooks = createSqliteWebhooks(config.webhooks as NonNullable<typeof config.webhooks>, { db, writer: openDatabase(file, { busyTimeoutMs: 1000 }) }, {
    logger: captureLogs().logger,
    tenants: config.tenants,
  });
  webhooks.start();
  return {
    record: (entry: Partial<ChangeEntry>) => webhooks.outbox.record({ type: 'plant.created', subject: 1n, data: '{"id":1,"name":"Fern"}', bare: true, ...entry }),
    close: async () => {
      await webhooks.stop(1000);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}


async function deliveredThrough(hooks: Receiver, tenants: Record<string, string>, entry: Partial<ChangeEntry> = {}) {
  const outbox = outboxOver(hooks.url, tenants);
  try {
    outbox.record(entry);
    const [delivery] = await hooks.waitFor((all) => all.length === 1);
    return { body: delivery?.body, verified: delivery?.verified, tenant: tenantHeaderOf(delivery) };
  } finally {
    await outbox.close();
  }
}

describe('the webhook-tenant header', () => {
  it('when tenants are off, then a delivery has no webhook-tenant header and verifies as before', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const plant = aNewPlant();

    await postPlant(app, plant);
    const [delivery] = await hooks.waitFor((all) => all.length === 1);

    expect({ body: delivery?.body, verified: delivery?.verified, tenant: tenantHeaderOf(delivery) }).toEqual({ body: JSON.stringify(plant), verified: true, tenant: undefined });
  });

  it('when tenants are on and a plant of the shared tenant changes, then the header names TENANT_DEFAULT percent-encoded, outside the signed body', async () => {
    const hooks = await receiver();

    const seen = await deliveredThrough(hooks, { TENANT_CLAIM: 'sub', TENANT_DEFAULT: 'Grün & Co/1' });

    expect(seen).toEqual({ body: '{"id":1,"name":"Fern"}', verified: true, tenant: 'Gr%C3%BCn%20%26%20Co%2F1' });
    expect(decodeURIComponent(seen.tenant as string)).toBe('Grün & Co/1');
  });

  it('when tenants are on without TENANT_DEFAULT, then a delivery of the shared tenant has no header', async () => {
    const hooks = await receiver();

    const seen = await deliveredThrough(hooks, { TENANT_CLAIM: 'sub' });

    expect(seen).toEqual({ body: '{"id":1,"name":"Fern"}', verified: true, tenant: undefined });
  });

  it('when the outbox stores the tenant, then a delivery of another tenant\'s change names that tenant', async () => {
    const hooks = await receiver();

    const seen = await deliveredThrough(hooks, { TENANT_CLAIM: 'sub', TENANT_DEFAULT: 'alice' }, { tenant: 'bob' as TenantKey });

    expect(seen).toEqual({ body: '{"id":1,"name":"Fern"}', verified: true, tenant: 'bob' });
  });

  it('when an event of a tenant is delivered, then the header carries its name and the signature still verifies', async () => {
    const hooks = await receiver();
    const config = configWith(hooks.url, {}).webhooks as NonNullable<ReturnType<typeof configWith>['webhooks']>;
    const subscriber = subscriberOf(config.subscribers[0] as (typeof config.subscribers)[number], config);
    const event = { seq: '1', eventId: 'msg_0123456789abcdef0123456789abcdef', subscriber: hooks.url, payload: '{"id":2,"name":"Palm"}', type: 'plant.created', attempts: 0, createdAt: Date.now(), tenant: 'bob' as TenantKey };

    const { result } = deliver(subscriber, [decodeSecret(WEBHOOK_SECRET)], event, Date.now(), 5000, encodeURIComponent('bob ✓'));
    const outcome = await result;
    const [delivery] = await hooks.waitFor((all) => all.length === 1);
    await subscriber.pool.close();

    expect({ outcome: outcome.outcome, verified: delivery?.verified, tenant: tenantHeaderOf(delivery) }).toEqual({ outcome: 'delivered', verified: true, tenant: 'bob%20%E2%9C%93' });
  });
});
