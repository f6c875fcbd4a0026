/**
 * The SQLite store: one file, opened and migrated before the repository prepares its statements, with the
 * webhook outbox on the same connection so a change and its events share one commit.
 */
import { ConfigError } from '../config';
import { openDatabase, type Db } from '../db/database.sqlite';
import { isMigrated, loadMigrations, migrate, type Migration } from '../db/migrate.sqlite';
import { refuseLostStore, SqliteHealth } from '../db/health.sqlite';
import type { Logger } from '../logger';
import type { Resource } from '../resource';
import type { Store, StoreConfig, StoreHooks } from './store';

/**
 * Whether every SQLite statement reads and writes inside the caller's tenant (issue 35, migrations/sqlite/012):
 * TENANT_CLAIM needs it.
 */
export const ISOLATES_TENANTS = true;

/**
 * Tenants on over a store that holds plants of the shared tenant (stored before tenants were turned on): only
 * TENANT_DEFAULT says whose they are, so without it the start is refused rather than leave them to no one.
 */
function refuseUnownedPlants(db: Db, config: Pick<StoreConfig, 'tenants'>): void {
  if (config.tenants === undefined || config.tenants.defaultName !== undefined) return;
  if (db.prepare("SELECT 1 FROM plants WHERE tenant = '' LIMIT 1").get() === undefined) return;
  throw new ConfigError(
    'TENANT_DEFAULT: this store holds plants stored before tenants were turned on; set TENANT_DEFAULT to the name of the tenant that keeps them',
  );
}

/**
 * The store's parts over an open, migrated database: each resource's parts (its repository with the
 * file-identity and fault guard, and the webhook outbox inside its commits), the readiness check, and the webhook
 * dispatcher. Tests call it on a connection of their own to provoke faults (a read-only connection).
 */
export function sqliteParts(
  db: Db,
  migrations: readonly Migration[],
  config: Pick<StoreConfig, 'databaseBusyTimeoutMs' | 'webhooks' | 'events'> & Partial<Pick<StoreConfig, 'tenants'>> & { idempotencyTtlMs?: number },
  logger: Logger,
  resources: readonly Resource[],
  hooks: StoreHooks = {},
): Pick<Store, 'resources' | 'readiness' | 'webhooks'> {
  const health = new SqliteHealth(db, logger, config.databaseBusyTimeoutMs);
  /* eslint-disable @typescript-eslint/no-require-imports */
  const webhooks =
    config.webhooks === undefined
      ? undefined
      : (require('../webhooks') as typeof import('../webhooks')).createSqliteWebhooks(
          config.webhooks,
          { db, writer: openDatabase(db.name, { busyTimeoutMs: config.databaseBusyTimeoutMs }) },
          {
            logger,
            observer: hooks.webhookObserver,
            tenants: config.tenants,
          },
        );
  /* eslint-enable @typescript-eslint/no-require-imports */
  const context = { db, health, logger, hooks, outbox: webhooks?.outbox, events: config.events, idempotencyTtlMs: config.idempotencyTtlMs };
  return {
    resources: resources.map((resource) => ({ resource, parts: resource.store.sqlite(context) })),
    readiness: () =>
      Promise.resolve().then(() => {
        const migrated = isMigrated(db, migrations);
        if (migrated) health.assertReady();
        return migrated;
      }),
    webhooks,
  };
}

/** Opens and migrates the file, refusing one that vanished since a previous run (src/db/health.sqlite.ts). */
export function createSqliteStore(file: string, config: StoreConfig, logger: Logger, resources: readonly Resource[], hooks: StoreHooks = {}): Store {
  refuseLostStore(file);
  const db = openDatabase(file, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  const migrations = loadMigrations();
  // Before the repositories: they prepare their statements against the migrated schema.
  const applied = migrate(db, migrations);
  try {
    refuseUnownedPlants(db, config);
  } catch (error) {
    db.close();
    throw error;
  }
  logger.info({ database: file, applied }, 'database ready');
  return sqliteStoreOver(db, migrations, config, logger, resources, hooks);
}

/** The store over a database already open and migrated; its close closes that connection. */
export function sqliteStoreOver(
  db: Db,
  migrations: readonly Migration[],
  config: StoreConfig,
  logger: Logger,
  resources: readonly Resource[],
  hooks: StoreHooks = {},
): Store {
  return {
    ...sqliteParts(db, migrations, config, logger, resources, hooks),
    open: () => Promise.resolve(),
    start: () => undefined,
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
