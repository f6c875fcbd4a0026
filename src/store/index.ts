/**
 * The store's wiring: picks the dialect from DATABASE_URL and builds, over its connection, the webhook outbox,
 * each registered resource's parts (src/resource.ts: repository, change feed, routes), the dispatcher and the
 * readiness check. It names no resource and never serves HTTP. Each dialect and the webhooks load only when
 * configured: better-sqlite3, pg and undici are each a native addon or a pool of memory a deployment without them
 * should not carry.
 */
import { ConfigError } from '../config';
import type { Logger } from '../logger';
import type { Resource } from '../resource';
import type { StoreConfig, Store, StoreHooks } from './store';

export type { Store, StoreConfig, StoreHooks } from './store';

/**
 * Tenants are turned on only on a store whose every statement carries the tenant (issue 35 lands a dialect at a
 * time): anywhere else TENANT_CLAIM refuses the start rather than serve one tenant another's plants.
 */
function refuseTenantsUnless(isolates: boolean, config: StoreConfig, dialect: string): void {
  if (config.tenants !== undefined && !isolates) throw new ConfigError(`TENANT_CLAIM: tenants are not available on ${dialect} in this version; unset it`);
}

/** Picks the store from DATABASE_URL: file: is SQLite, postgres:// is PostgreSQL. */
export function createStore(config: StoreConfig, logger: Logger, resources: readonly Resource[], hooks: StoreHooks = {}): Store {
  /* eslint-disable @typescript-eslint/no-require-imports */
  if (config.database.dialect === 'postgres') {
    const { PostgresStore, ISOLATES_TENANTS } = require('./store.postgres') as typeof import('./store.postgres');
    refuseTenantsUnless(ISOLATES_TENANTS, config, 'PostgreSQL');
    return new PostgresStore(config.database.url, config, logger, resources, hooks);
  }
  const { createSqliteStore, ISOLATES_TENANTS } = require('./store.sqlite') as typeof import('./store.sqlite');
  refuseTenantsUnless(ISOLATES_TENANTS, config, 'SQLite');
  return createSqliteStore(config.database.path, config, logger, resources, hooks);
  /* eslint-enable @typescript-eslint/no-require-imports */
}
