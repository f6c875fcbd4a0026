import type { Config } from '../config';
import type { Readiness } from '../lifecycle';
import type { Mounted, ResourceHooks } from '../resource';
import type { Dispatching, WebhookObserver } from '../webhooks';

/** The variables the store reads: where the database is, how long to wait on it, and the webhook subscribers. */
export type StoreConfig = Pick<
  Config,
  'database' | 'databaseBusyTimeoutMs' | 'databasePoolSize' | 'databaseStatementTimeoutMs' | 'databaseConnectTimeoutMs' | 'webhooks' | 'events' | 'idempotencyTtlMs' | 'tenants'
>;

/**
 * Instruments the store and its resources report to (absent when metrics are off), a worker's machine slots and
 * commit notices, and `leader`: SQLite's webhook dispatcher runs only once this worker leads (absent: at once).
 */
export type StoreHooks = ResourceHooks & { webhookObserver?: WebhookObserver };

/**
 * What the service holds of the store, whatever the dialect: each registered resource with the parts it built
 * over this store (its routes, its background work), the readiness check, the migration run before listening,
 * background work after it (PostgreSQL: reconnect and migrate when it was away at start), and the close at the
 * end of the drain.
 */
export type Store = {
  /** The registered resources, in their order, each with its parts over this store (src/resource.ts). */
  resources: readonly Mounted[];
  readiness: Readiness;
  /** The webhook dispatcher over this store's outbox; absent when no subscriber is configured. */
  webhooks?: Dispatching;
  /** PostgreSQL: migrates, and an unreachable server is logged and left to start(); SQLite has migrated already. */
  open: () => Promise<void>;
  start: () => void;
  close: () => Promise<void>;
};
