import type { Config } from '../config';
import type { Logger } from '../logger';
import type { PlantRepository } from '../plants/plant.repository';
import { SqlitePlantRepository } from '../plants/plant.repository.sqlite';
import type { StoreObserver } from '../plants/store-observer';
import type { WebhookObserver } from '../webhooks';
import { openDatabase, type Db } from './database';
import { isMigrated, loadMigrations, migrate, type Migration } from './migrate';
import { refuseLostStore, SqliteHealth } from './sqlite-health';

/** Resolves true when the store is readable and migrated, false when readable but behind; throws when unreadable. */
export type Readiness = () => Promise<boolean>;

/**
 * What server.ts holds of the store, whatever the dialect: the repository and readiness check createApp needs,
 * the migration run before listening, background work after it (PostgreSQL: reconnect and migrate when it was
 * away at start), and the close at the end of the drain.
 */
export type Store = {
  plants: PlantRepository;
  readiness: Readiness;
  /** The new-plant webhook's dispatcher over this store's outbox; absent when no subscriber is configured. */
  webhooks?: { start(): void; stop(timeoutMs: number): Promise<void> };
  /** PostgreSQL: migrates, and an unreachable server is logged and left to start(); SQLite has migrated in createStore. */
  open: () => Promise<void>;
  start: () => void;
  close: () => Promise<void>;
};

/**
 * The store's optional parts load only when configured: pg (~15 MiB of memory) for PostgreSQL, undici (~19 MiB)
 * for webhooks. A SQLite deployment without webhooks never carries them.
 */
function load<T>(part: 'postgres' | 'webhooks'): T {
  /* eslint-disable @typescript-eslint/no-require-imports */
  return (part === 'postgres' ? require('./store.postgres') : require('../webhooks')) as T;
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Instruments the store reports to; absent when metrics are off. */
export type StoreHooks = { observer?: StoreObserver; webhookObserver?: WebhookObserver };

/**
 * The SQLite store over an open, migrated database: the repository (with its file-identity and fault guard, and
 * the webhook outbox inside its commits), the readiness check, and the webhook dispatcher.
 */
export function sqliteParts(
  db: Db,
  migrations: readonly Migration[],
  config: Config,
  logger: Logger,
  hooks: StoreHooks = {},
): Pick<Store, 'plants' | 'readiness' | 'webhooks'> {
  const health = new SqliteHealth(db, logger, config.databaseBusyTimeoutMs);
  const webhooks =
    config.webhooks === undefined ? undefined : load<typeof import('../webhooks')>('webhooks').createSqliteWebhooks(config, db, logger, hooks.webhookObserver);
  return {
    plants: new SqlitePlantRepository(db, logger, health, hooks.observer, webhooks?.outbox),
    readiness: () =>
      Promise.resolve().then(() => {
        const migrated = isMigrated(db, migrations);
        if (migrated) health.assertReady();
        return migrated;
      }),
    webhooks,
  };
}

/** Picks the store from DATABASE_URL: file: is SQLite, postgres:// is PostgreSQL. */
export function createStore(config: Config, logger: Logger, hooks: StoreHooks = {}): Store {
  const target = config.database;
  if (target.dialect === 'postgres') {
    const { PostgresStore } = load<typeof import('./store.postgres')>('postgres');
    return new PostgresStore(
      {
        url: target.url,
        poolSize: config.databasePoolSize,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
        connectTimeoutMs: config.databaseConnectTimeoutMs,
      },
      logger,
      {
        observer: hooks.observer,
        webhooks: (pool) =>
          config.webhooks === undefined
            ? undefined
            : load<typeof import('../webhooks')>('webhooks').createPostgresWebhooks(config, pool, logger, { observer: hooks.webhookObserver }),
      },
    );
  }
  refuseLostStore(target.path);
  const db = openDatabase(target.path, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  const migrations = loadMigrations();
  // Before the repository: it prepares its statements against the migrated schema.
  const applied = migrate(db, migrations);
  logger.info({ database: target.path, applied }, 'database ready');
  return {
    ...sqliteParts(db, migrations, config, logger, hooks),
    open: () => Promise.resolve(),
    start: () => undefined,
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
