/**
 * The new-plant webhook: the outbox written in each create's transaction, and the dispatcher that sends,
 * signs, retries and prunes its events. The dispatcher must never block or slow a create; with no webhook
 * configured nothing here runs and nothing is stored.
 */
import type { Config } from '../config';
import type { Db } from '../db/database';
import type { Logger } from '../logger';
import { WebhookDispatcher } from './dispatcher';
import type { PlantOutbox } from './outbox';
import { SqliteOutbox } from './outbox.sqlite';

export type { PlantOutbox } from './outbox';

export type Webhooks = { outbox: PlantOutbox; start(): void; stop(timeoutMs: number): Promise<void> };

/** The SQLite outbox and its dispatcher, or undefined when no subscriber is configured. */
export function createSqliteWebhooks(config: Config, db: Db, logger: Logger): Webhooks | undefined {
  if (config.webhooks === undefined) return undefined;
  const outbox = new SqliteOutbox(db, config.webhooks.urls);
  const dispatcher = new WebhookDispatcher({ store: outbox, config: config.webhooks, logger });
  outbox.onRecorded = dispatcher.wake;
  return { outbox, start: () => dispatcher.start(), stop: (timeoutMs) => dispatcher.stop(timeoutMs) };
}
