import type { Config } from '../config';
import type { Logger } from '../logger';
import type { PlantRepository } from '../plants/plant.repository';
import { SqlitePlantRepository } from '../plants/plant.repository.sqlite';
import { openDatabase, type Db } from './database';
import { isMigrated, loadMigrations, migrate, type Migration } from './migrate';
import { PostgresStore } from './store.postgres';

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
  /** PostgreSQL: migrates, and an unreachable server is logged and left to start(); SQLite has migrated in createStore. */
  open: () => Promise<void>;
  start: () => void;
  close: () => Promise<void>;
};

/** The SQLite store over an open database: the repository and readiness check createApp needs. */
export function sqliteParts(db: Db, migrations: readonly Migration[], logger: Logger): Pick<Store, 'plants' | 'readiness'> {
  return {
    plants: new SqlitePlantRepository(db, logger),
    readiness: () => Promise.resolve().then(() => isMigrated(db, migrations)),
  };
}

/** Picks the store from DATABASE_URL: file: is SQLite, postgres:// is PostgreSQL. */
export function createStore(config: Config, logger: Logger): Store {
  const target = config.database;
  if (target.dialect === 'postgres') {
    return new PostgresStore(
      {
        url: target.url,
        poolSize: config.databasePoolSize,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
        connectTimeoutMs: config.databaseConnectTimeoutMs,
      },
      logger,
    );
  }
  const db = openDatabase(target.path, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  const migrations = loadMigrations();
  // Before the repository: it prepares its statements against the migrated schema.
  const applied = migrate(db, migrations);
  logger.info({ database: target.path, applied }, 'database ready');
  return {
    ...sqliteParts(db, migrations, logger),
    open: () => Promise.resolve(),
    start: () => undefined,
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
