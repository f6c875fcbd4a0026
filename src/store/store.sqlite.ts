/**
 * The SQLite store: one file, opened and migrated before the repository prepares its statements, with the
 * webhook outbox on the same connection so a change and its events share one commit.
 */
import { openDatabase, type Db } from '../db/database.sqlite';
import { isMigrated, loadMigrations, migrate, type Migration } from '../db/migrate.sqlite';
import { refuseLostStore, SqliteHealth } from '../db/health.sqlite';
import type { Logger } from '../logger';
import type { Resource } from '../resource';
import type { Store, StoreConfig, StoreHooks } from './store';

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
            leader: hooks.leader,
            commits: hooks.commits,
          },
        );
  /* eslint-enable @typescript-eslint/no-require-imports */
  const context = { db, health, logger, hooks, outbox: webhooks?.outbox, events: config.events, idempotencyTtlMs: config.idempotencyTtlMs, tenants: config.tenants };
  const mounted = resources.map((resource) => ({ resource, parts: resource.store.sqlite(context) }));
  health.serve();
  return {
    resources: mounted,
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
  logger.info({ database: file, applied }, 'database ready');
  try {
    return sqliteStoreOver(db, migrations, config, logger, resources, hooks);
  } catch (error) {
    // A resource refused the file (tenants on over rows no tenant owns): the start fails with the file closed.
    db.close();
    throw error;
  }
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
  const parts = sqliteParts(db, migrations, config, logger, resources, hooks);
  return {
    ...parts,
    open: () => Promise.resolve(),
    start: () => undefined,
    // A write still queued (its client gone, its lock retry pending) is committed or failed first: closing under
    // it would fail it with "The database connection is not open".
    close: async () => {
      await Promise.all(parts.resources.map(({ parts: each }) => each.settled?.() ?? Promise.resolve()));
      db.close();
    },
  };
}
