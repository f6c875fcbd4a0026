/**
 * The store's wiring: picks the dialect from DATABASE_URL and builds its repository, the webhook outbox handed
 * to that repository, the dispatcher and the readiness check. It never serves HTTP. Each dialect and the webhooks
 * load only when configured: better-sqlite3, pg and undici are each a native addon or a pool of memory a
 * deployment without them should not carry.
 */
import type { Logger } from '../logger';
import type { StoreConfig, Store, StoreHooks } from './store';

export type { Store, StoreConfig, StoreHooks } from './store';

/** Picks the store from DATABASE_URL: file: is SQLite, postgres:// is PostgreSQL. */
export function createStore(config: StoreConfig, logger: Logger, hooks: StoreHooks = {}): Store {
  /* eslint-disable @typescript-eslint/no-require-imports */
  if (config.database.dialect === 'postgres') {
    const { PostgresStore } = require('./postgres') as typeof import('./postgres');
    return new PostgresStore(config.database.url, config, logger, hooks);
  }
  const { createSqliteStore } = require('./sqlite') as typeof import('./sqlite');
  return createSqliteStore(config.database.path, config, logger, hooks);
  /* eslint-enable @typescript-eslint/no-require-imports */
}
