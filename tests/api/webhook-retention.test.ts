import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { createSqliteWebhooks } from '../../src/webhooks';
import { startReceiver, WEBHOOK_SECRET } from '../helpers/webhook-receiver';
import { sleep } from '../helpers/common';
import { captureLogs } from '../helpers/common';

const HOUR = 3_600_000;

describe('the webhook outbox at start', () => {
  it('when events are older than WEBHOOK_RETENTION_HOURS or their subscriber is gone, then settled ones are pruned, orphans failed, the rest kept', async () => {
    const hooks = await startReceiver();
    const db = openDatabase(path.join(mkdtempSync(path.join(os.tmpdir(), 'plants-webhooks-')), 'plants.db'), { busyTimeoutMs: 1000 });
    migrate(db, loadMigrations());
    const now = Date.now();
    const insert = db.prepare(
      'INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, status, attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const rows: [string, string, number, string, string, number, number][] = [
      ['msg_old_delivered', hooks.url, 1, 'delivered', 'delivered', 1, now - 2 * HOUR],
      ['msg_old_failed', hooks.url, 2, 'failed', 'failed', 8, now - 2 * HOUR],
      ['msg_recent_delivered', hooks.url, 3, 'delivered', 'delivered', 1, now - 10 * 60_000],
      ['msg_old_pending', hooks.url, 4, '{"id":4,"name":"Old"}', 'pending', 2, now - 2 * HOUR],
      ['msg_removed_subscriber', 'http://127.0.0.1:9/gone', 5, '{"id":5,"name":"Gone"}', 'pending', 0, now - 2 * HOUR],
    ];
    for (const [id, subscriber, plantId, payload, status, attempts, at] of rows) insert.run(id, subscriber, plantId, payload, status, attempts, at, at, at);
    const config = loadConfig({ AUTH_TOKENS: 'x'.repeat(32), WEBHOOK_URLS: hooks.url, WEBHOOK_SECRET, WEBHOOK_RETENTION_HOURS: '1' });
    const { logs, logger } = captureLogs(config);
    if (config.webhooks === undefined) throw new Error('webhooks not configured');
    const webhooks = createSqliteWebhooks(config.webhooks, { db, writer: openDatabase(db.name, { busyTimeoutMs: 1000 }) }, { logger });

    webhooks.start();
    await hooks.waitFor((all) => all.length === 1);
    await sleep(400);
    await webhooks.stop(1000);
    const left = db.prepare('SELECT event_id, status, attempts, last_error FROM webhook_outbox ORDER BY seq').safeIntegers(false).all();
    db.close();
    await hooks.close();

    expect(left).toEqual([
      { event_id: 'msg_recent_delivered', status: 'delivered', attempts: 1, last_error: null },
      { event_id: 'msg_old_pending', status: 'delivered', attempts: 3, last_error: null },
      { event_id: 'msg_removed_subscriber', status: 'failed', attempts: 0, last_error: 'subscriber no longer configured' },
    ]);
    expect(hooks.deliveries.map((delivery) => [delivery.id, delivery.body, delivery.verified])).toEqual([['msg_old_pending', '{"id":4,"name":"Old"}', true]]);
    expect(logs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ msg: 'webhook outbox pruned', deleted: 2, retentionHours: 1 }),
        expect.objectContaining({ msg: 'webhook events of subscribers no longer configured marked failed', events: 1 }),
      ]),
    );
  });
});
