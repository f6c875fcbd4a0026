/**
 * The new-plant webhook: the outbox written in each create's transaction, and the dispatcher that sends,
 * signs, retries and prunes its events. The dispatcher must never block or slow a create; with no webhook
 * configured nothing here runs and nothing is stored.
 */
import type { Pool } from 'pg';
import type { Config } from '../config';
import type { Db } from '../db/database';
import type { Logger } from '../logger';
import { WebhookDispatcher } from './dispatcher';
import type { PlantOutbox } from './outbox';
import { PostgresOutbox } from './outbox.postgres';
import { SqliteOutbox } from './outbox.sqlite';
import type { WebhookObserver } from './webhook-observer';

export type { PlantOutbox } from './outbox';
export { APPLY_WITH_EVENTS, type BatchCreate } from './outbox.postgres';
export type { AttemptOutcome, WebhookObserver } from './webhook-observer';

export type Webhooks = { outbox: PlantOutbox; start(): void; stop(timeoutMs: number): Promise<void> };

/** The SQLite outbox and its dispatcher, or undefined when no subscriber is configured. */
export function createSqliteWebhooks(config: Config, db: Db, logger: Logger, observer?: WebhookObserver): Webhooks | undefined {
  if (config.webhooks === undefined) return undefined;
  const outbox = new SqliteOutbox(db, config.webhooks.urls, config.databaseBusyTimeoutMs);
  const dispatcher = new WebhookDispatcher({ store: outbox, config: config.webhooks, logger, observer });
  outbox.onRecorded = dispatcher.wake;
  return {
    outbox,
    start: () => dispatcher.start(),
    stop: async (timeoutMs) => {
      await dispatcher.stop(timeoutMs);
      outbox.close();
    },
  };
}

export type PostgresWebhooks = {
  /**
   * The plant store runs APPLY_WITH_EVENTS with eventParams (one statement); recordCreated does the same inside a
   * transaction of the caller's, with the plants actually inserted.
   */
  outbox: Pick<PostgresOutbox, 'recordCreated' | 'eventParams'>;
  /** Call after that transaction commits: the dispatcher looks at once instead of at its next poll. */
  wake(): void;
  start(): void;
  stop(timeoutMs: number): Promise<void>;
};

/** The PostgreSQL outbox and this replica's dispatcher, or undefined when no subscriber is configured. */
export function createPostgresWebhooks(
  config: Config,
  pool: Pool,
  logger: Logger,
  options: { pollMs?: number; observer?: WebhookObserver } = {},
): PostgresWebhooks | undefined {
  if (config.webhooks === undefined) return undefined;
  // Longer than any attempt can take, so a lease runs out only when its replica is gone.
  const outbox = new PostgresOutbox(pool, config.webhooks.urls, 2 * config.webhooks.timeoutMs + 30_000);
  const dispatcher = new WebhookDispatcher({ store: outbox, config: config.webhooks, logger, pollMs: options.pollMs, observer: options.observer });
  return { outbox, wake: dispatcher.wake, start: () => dispatcher.start(), stop: (timeoutMs) => dispatcher.stop(timeoutMs) };
}
