// Issue 35, row R4 on SQLite: how long migrations/sqlite/012-tenants.sql takes on a store of the previous level
// (011) holding PLANTS plants (a third without a tag, the service's times and search keys), as many events and
// KEYS idempotency keys: the downtime of the upgrade, since SQLite migrates before the service listens. The store
// is opened as the service opens it (WAL, synchronous=FULL) and migrated by the service's own runner (dist/).
//
//   npm run build && node_modules/.bin/node --require tsx/cjs bench/tenants.migrate.sqlite.ts
//   BENCH_TENANT_PLANTS=100000 … for a quick run
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';

type Migration = { name: string };
/* eslint-disable @typescript-eslint/no-require-imports */
const { openDatabase } = require('../dist/db/database.sqlite') as { openDatabase: (file: string, options: { busyTimeoutMs: number }) => Database.Database };
const { loadMigrations, migrate } = require('../dist/db/migrate.sqlite') as {
  loadMigrations: () => Migration[];
  migrate: (db: Database.Database, migrations: readonly Migration[]) => string[];
};
/* eslint-enable @typescript-eslint/no-require-imports */

const PLANTS = Number(process.env.BENCH_TENANT_PLANTS ?? 1_000_000);
const KEYS = Number(process.env.BENCH_TENANT_KEYS ?? PLANTS / 10);
const TIME = '2026-11-27T09:41:07.250Z';

/** The previous level's rows, written by SQL in one transaction: plants 1..PLANTS, one event each, KEYS keys. */
function seed(db: Database.Database): void {
  db.transaction(() => {
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${PLANTS})
      INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_key)
      SELECT i, 'Monstera deliciosa ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'tag ' || (i % 50) END, i, '${TIME}', '${TIME}', 'monstera deliciosa ' || i FROM n`);
    db.exec(`INSERT INTO plant_events (pos, kind, plant_id, name, tag, at, created_at, updated_at)
      SELECT id, 'created', id, name, tag, 1764236467250, created_at, updated_at FROM plants`);
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${KEYS})
      INSERT INTO idempotency_keys (caller, key, fingerprint, status, etag, location, body, expires_at)
      SELECT 'token:bench', 'key-' || i, printf('%064x', i), 201, '"' || i || '"', '/plants/' || i, '{"name":"Monstera"}', 4102444800000 FROM n`);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
}

const bytes = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};
const mib = (n: number): string => (n / 1024 / 1024).toFixed(1);

function main(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-tenants-migrate-'));
  const file = path.join(dir, 'plants.db');
  try {
    const migrations = loadMigrations();
    const at = migrations.findIndex((migration) => migration.name === '012-tenants.sql');
    let db = openDatabase(file, { busyTimeoutMs: 5000 });
    migrate(db, migrations.slice(0, at));
    const seeding = performance.now();
    seed(db);
    const seededS = (performance.now() - seeding) / 1000;
    db.close();
    const before = bytes(file);

    // As a start does: open, then migrate before listening.
    const started = performance.now();
    db = openDatabase(file, { busyTimeoutMs: 5000 });
    const applied = migrate(db, migrations);
    const seconds = (performance.now() - started) / 1000;
    const wal = bytes(`${file}-wal`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();

    console.log(
      JSON.stringify({
        plants: PLANTS,
        events: PLANTS,
        keys: KEYS,
        seededS: Number(seededS.toFixed(1)),
        applied,
        migrateS: Number(seconds.toFixed(2)),
        fileMiBBefore: mib(before),
        walMiBAfterMigrate: mib(wal),
        fileMiBAfter: mib(bytes(file)),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
