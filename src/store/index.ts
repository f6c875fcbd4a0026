/**
 * The store's wiring: picks the dialect from DATABASE_URL and builds, over its connection, the webhook outbox,
 * each registered resource's parts (src/resource.ts: repository, change feed, routes), the dispatcher and the
 * readiness check. It names no resource and never serves HTTP. Each dialect and the webhooks load only when
 * configured: better-sqlite3, pg and undici are each a native addon or a pool of memory a deployment without them
 * should not carry.
 */
import type { Logger } from '../logger';
import type { Resource } from '../resource';
import type { StoreConfig, Store, StoreHooks } from './store';

export type { Store, StoreConfig, StoreHooks } from './store';

/** Picks the store from DATABASE_URL: file: is SQLite, postgres:// is PostgreSQL. */
export function createStore(config: StoreConfig, logger: Logger, resources: readonly Resource[], hooks: StoreHooks = {}): Store {
  /* eslint-disable @typescript-eslint/no-require-imports */
  if (config.database.dialect === 'postgres') {
    const { PostgresStore } = require('./store.postgres') as typeof import('./store.postgres');
    return new PostgresStore(config.database.url, config, logger, resources, hooks);
  }
  const { createSqliteStore } = require('./store.sqlite') as typeof import('./store.sqlite');
  return createSqliteStore(config.database.path, config, logger, resources, hooks);
  /* eslint-enable @typescript-eslint/no-require-imports */
}
