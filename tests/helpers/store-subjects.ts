import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import type { PlantParts } from '../../src/plants';
import { RESOURCES } from '../../src/resources';
import { createStore } from '../../src/store';
import type { PostgresStore } from '../../src/store/store.postgres';
import { sqliteParts } from '../../src/store/store.sqlite';
import { captureLogs } from './common';
import { plantRepository } from './store-parts';

/** A store's plant repository driven without HTTP (tests/store), and how to put it away. */
export type PlantsSubject = { plants: PlantParts['repository']; close: () => Promise<void> };

const config = (url: string) => loadConfig({ DATABASE_URL: url, AUTH_TOKENS: 'x'.repeat(32) });

/** The plant repository over a new, migrated SQLite file, built as the store builds it; close removes the file. */
export function sqlitePlants(): PlantsSubject {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-store-'));
  const file = path.join(dir, 'plants.db');
  const db = openDatabase(file, { busyTimeoutMs: 1000 });
  const migrations = loadMigrations();
  migrate(db, migrations);
  return {
    plants: plantRepository(sqliteParts(db, migrations, config(`file:${file}`), captureLogs().logger, RESOURCES)),
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/** A PostgreSQL store on the database at `url`, opened (migrated); the caller closes it. */
export async function openPostgresStore(url: string): Promise<PostgresStore> {
  const store = createStore(config(url), captureLogs().logger, RESOURCES) as PostgresStore;
  await store.open();
  return store;
}
