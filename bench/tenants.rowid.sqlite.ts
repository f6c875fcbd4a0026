// Issue 35: the shape of plants after migrations/sqlite/012 (docs/decisions/stores.md "Tenants on SQLite"). On a
// store of PLANTS plants it times a create (the plant's INSERT with every index, one transaction each,
// synchronous=OFF so the statement's own cost shows rather than the fsync every create also pays) and a read by id
// (the repository's JSON statement, random ids), for three shapes: the table before 012 (id is the rowid), 012's
// WITHOUT ROWID table keyed (tenant, id), and a rowid table with UNIQUE (tenant, id) and the same indexes with id
// spelled out. Shapes alternate, ROUNDS times; medians and minimums (the least disturbed run, on a shared machine).
//
//   npm run build && node_modules/.bin/node --require tsx/cjs bench/tenants.rowid.sqlite.ts
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';

type Migration = { name: string; sql: string };
/* eslint-disable @typescript-eslint/no-require-imports */
const { openDatabase } = require('../dist/db/database.sqlite') as { openDatabase: (file: string, options: { busyTimeoutMs: number }) => Database.Database };
const { loadMigrations, migrate } = require('../dist/db/migrate.sqlite') as {
  loadMigrations: () => Migration[];
  migrate: (db: Database.Database, migrations: readonly Migration[]) => string[];
};
const { plantJsonSqlite } = require('../dist/plants/plant.json') as { plantJsonSqlite: () => string };
/* eslint-enable @typescript-eslint/no-require-imports */

const PLANTS = Number(process.env.BENCH_TENANT_PLANTS ?? 100_000);
const CREATES = 5000;
const READS = 50_000;
const ROUNDS = Number(process.env.BENCH_TENANT_ROUNDS ?? 9);
const TIME = '2026-11-27T09:41:07.250Z';

// The alternative to 012's WITHOUT ROWID: a rowid table, (tenant, id) unique, each index spelling id out.
const ROWID_SHAPE = `
CREATE TABLE plants_new (tenant TEXT NOT NULL DEFAULT '', id INTEGER NOT NULL, name TEXT NOT NULL, tag TEXT, version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT, updated_at TEXT, name_key TEXT, UNIQUE (tenant, id)) STRICT;
INSERT INTO plants_new (tenant, id, name, tag, version, created_at, updated_at, name_key) SELECT '', id, name, tag, version, created_at, updated_at, name_key FROM plants ORDER BY id;
DROP TABLE plants; ALTER TABLE plants_new RENAME TO plants;
CREATE INDEX plants_by_tag ON plants (tenant, tag, id);
CREATE INDEX plants_by_name ON plants (tenant, name_key, name, id, tag, created_at, updated_at);
CREATE INDEX plants_by_created ON plants (tenant, created_at, id);
CREATE INDEX plants_by_updated ON plants (tenant, updated_at, id);
CREATE INDEX plants_by_id_key ON plants (tenant, id, name_key);
CREATE INDEX plants_unkeyed ON plants (tenant, id) WHERE name_key IS NULL;`;

type Shape = { name: string; tenant: boolean; db: Database.Database };

function openShape(dir: string, name: string): Shape {
  const db = openDatabase(path.join(dir, `${name}.db`), { busyTimeoutMs: 5000 });
  const migrations = loadMigrations();
  const at = migrations.findIndex((migration) => migration.name === '012-tenants.sql');
  migrate(db, migrations.slice(0, at));
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${PLANTS})
    INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_key)
    SELECT i * 2, 'Monstera deliciosa ' || i, CASE WHEN i % 3 = 0 THEN NULL ELSE 'tag ' || (i % 50) END, i, '${TIME}', '${TIME}', 'monstera deliciosa ' || i FROM n`);
  if (name === 'without-rowid') migrate(db, migrations);
  if (name === 'rowid') db.exec(ROWID_SHAPE);
  db.pragma('synchronous = OFF');
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { name, tenant: name !== 'before', db };
}

/** µs per create: odd ids (the seeded ones are even), spread over the id range, one transaction each. */
function creates(shape: Shape, round: number): number {
  const columns = shape.tenant ? 'tenant, id' : 'id';
  const places = shape.tenant ? "'', ?" : '?';
  const insert = shape.db.prepare(`INSERT INTO plants (${columns}, name, tag, version, created_at, updated_at, name_key) VALUES (${places}, ?, ?, ?, ?, ?, ?)`);
  const one = shape.db.transaction((id: bigint) => insert.run(id, `Ficus ${id}`, 'tag 7', id, TIME, TIME, `ficus ${id}`));
  const started = performance.now();
  for (let i = 0; i < CREATES; i += 1) one(BigInt(((i * 7919) % PLANTS) * 2 + 1 + round * 2 * PLANTS));
  return ((performance.now() - started) * 1000) / CREATES;
}

/** µs per read by id of a seeded plant, as the repository reads it. */
function reads(shape: Shape): number {
  const where = shape.tenant ? "tenant = '' AND id = ?" : 'id = ?';
  const byId = shape.db.prepare(`SELECT ${plantJsonSqlite()} AS json, version FROM plants WHERE ${where}`);
  const started = performance.now();
  for (let i = 0; i < READS; i += 1) byId.get(BigInt(((i * 104_729) % PLANTS) * 2 + 2));
  return ((performance.now() - started) * 1000) / READS;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

function main(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-tenants-rowid-'));
  try {
    const shapes = ['before', 'without-rowid', 'rowid'].map((name) => openShape(dir, name));
    const figures = new Map(shapes.map((shape) => [shape.name, { create: [] as number[], read: [] as number[] }]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const shape of shapes) {
        const figure = figures.get(shape.name) as { create: number[]; read: number[] };
        figure.read.push(reads(shape));
        figure.create.push(creates(shape, round));
      }
    }
    for (const [name, { create, read }] of figures) {
      const figure = (values: number[]) => ({ median: Number(median(values).toFixed(2)), min: Number(Math.min(...values).toFixed(2)) });
      console.log(JSON.stringify({ shape: name, plants: PLANTS, createUs: figure(create), readByIdUs: figure(read) }));
    }
    for (const shape of shapes) shape.db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
