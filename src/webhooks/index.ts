/**
 * The webhooks: the outbox written in each change's transaction, and the dispatcher that sends, signs, retries
 * and prunes its events. The dispatcher must never block or slow a write; with no webhook configured nothing
 * here is loaded, runs or stores anything. src/store is its only caller.
 */
import type { Pool } from 'pg';
import type { ChangeOutbox, ChangeOutboxRows } from '../change-outbox';
import type { TenantsConfig, WebhookConfig } from '../config';
import type { Db } from '../db/database.sqlite';
import type { Logger } from '../logger';
import { whileLeading, type MachineCommits, type MachineLeader } from '../resource';
import { urlsOf, WebhookDispatcher } from './dispatcher';
import { PostgresOutbox } from './outbox.postgres';
import { SqliteOutbox } from './outbox.sqlite';
import type { WebhookObserver } from './observer';

export type { AttemptOutcome, WebhookBacklog, WebhookObserver } from './observer';

/** The dispatcher's lifecycle: started after the listener, stopped in the drain before the database closes. */
export type Dispatching = { start(): void; stop(timeoutMs: number): Promise<void> };

// The outboxes as the resources' repositories see them: the ports each implements (src/change-outbox.ts).
export type SqliteWebhooks = Dispatching & { outbox: ChangeOutbox };
export type PostgresWebhooks = Dispatching & { outbox: ChangeOutboxRows };

/**
 * At WORKERS above 1 on SQLite: the in-memory holds of the SQLite outbox let one dispatcher per machine attempt its
 * rows, so it runs in the leader only (a later leader's first sweep resends what a dead one left pending, with the
 * same webhook-id), woken by every worker's commits.
 */
type SqliteMachine = { leader?: MachineLeader; commits?: MachineCommits };

/**
 * The SQLite outbox on the store's connection and its dispatcher. `connections.writer` is a second connection to
 * the same file, opened by the caller (this module never loads the driver itself) and closed by stop().
 */
export function createSqliteWebhooks(
  config: WebhookConfig,
  connections: { db: Db; writer: Db },
  options: { logger: Logger; observer?: WebhookObserver; tenants?: TenantsConfig } & SqliteMachine,
): SqliteWebhooks {
  const outbox = new SqliteOutbox(connections.db, connections.writer, urlsOf(config), new Set(config.events));
  const dispatcher = new WebhookDispatcher({ store: outbox, config, logger: options.logger, observer: options.observer, tenants: options.tenants });
  // Only a started dispatcher attempts: a worker that does not lead records its commits' events and sends none.
  let started: WebhookDispatcher | undefined;
  outbox.onRecorded = () => started?.wake();
  // Another worker's commit: its events are on disk, due now (D9; the poll would find them within 250 ms anyway).
  const stopHearing = options.commits?.hear((events) => started?.wake(events));
  let release = (): WebhookDispatcher | undefined => undefined;
  return {
    outbox,
    start: () => {
      release = whileLeading(options.leader, () => {
        started = dispatcher;
        dispatcher.start();
        return dispatcher;
      });
    },
    stop: async (timeoutMs) => {
      stopHearing?.();
      await release()?.stop(timeoutMs);
      outbox.close();
    },
  };
}

/** The PostgreSQL outbox, shared by the replicas, and this replica's dispatcher. */
export function createPostgresWebhooks(
  config: WebhookConfig,
  pool: Pool,
  options: { logger: Logger; pollMs?: number; observer?: WebhookObserver; tenants?: TenantsConfig },
): PostgresWebhooks {
  // Longer than any attempt can take, so a lease runs out only when its replica is gone.
  const outbox = new PostgresOutbox(pool, urlsOf(config), 2 * config.timeoutMs + 30_000, config.events);
  const dispatcher = new WebhookDispatcher({
    store: outbox,
    config,
    logger: options.logger,
    pollMs: options.pollMs,
    observer: options.observer,
    tenants: options.tenants,
  });
  return {
    outbox: { rowsOf: (entries) => outbox.rowsOf(entries), wake: dispatcher.wake },
    start: () => dispatcher.start(),
    stop: (timeoutMs) => dispatcher.stop(timeoutMs),
  };
}
