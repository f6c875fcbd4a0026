import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { openDatabase, type Db } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { SORTS } from '../../src/plants/plant.schemas';
import type { PlantListQuery } from '../../src/plants/plant.list-query';
import type { PlantRepository } from '../../src/plants/plant.repository';
import type { PlantEventLog } from '../../src/plants/plant.events';
import { RESOURCES } from '../../src/resources';
import { createStore } from '../../src/store';
import { sqliteParts } from '../../src/store/store.sqlite';
import { SHARED_TENANT, type TenantKey } from '../../src/tenant';
import { captureLogs } from '../helpers/common';
import { plantRepository } from '../helpers/store-parts';

// A store written by the version before tenants (migrations up to 011), upgraded by 012: every row it held stays
// in the shared tenant '', read exactly as before, and every list shape reads a tenant-leading index.

const ACME = 'acme' as TenantKey;
const T1 = Date.UTC(2026, 10, 20, 8, 0, 0, 1);
const TIME = new Date(T1).toISOString();

const OLD_ROWS = [
  'INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_key) VALUES ' +
    `(1, 'Fern', 'shade', 1, '${TIME}', '${TIME}', 'fern'), (2, 'Ivy', NULL, 2, '${TIME}', '${TIME}', 'ivy'), (3, 'Moss', 'shade', 0, '${TIME}', '${TIME}', NULL)`,
  `INSERT INTO plant_events (pos, kind, plant_id, name, tag, at, created_at, updated_at) VALUES (1, 'created', 1, 'Fern', 'shade', ${T1}, '${TIME}', '${TIME}'), (2, 'created', 2, 'Ivy', NULL, ${T1}, '${TIME}', '${TIME}')`,
  `INSERT INTO idempotency_keys (caller, key, fingerprint, status, body, expires_at) VALUES ('token-a', 'k1', 'f', 201, '{}', ${Date.now() + 3_600_000})`,
  `INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, next_attempt_at, created_at, updated_at) VALUES ('e1', 'https://hooks.example', 1, '{}', ${T1}, ${T1}, ${T1})`,
];

type Subject = { db: Db; plants: PlantRepository & PlantEventLog; statements: string[]; close: () => void };

function openOldStore(): Subject {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-tenant-migration-'));
  const file = path.join(dir, 'plants.db');
  const db = openDatabase(file, { busyTimeoutMs: 1000 });
  const migrations = loadMigrations();
  migrate(db, migrations.slice(0, migrations.findIndex((migration) => migration.name === '012-tenants.sql')));
  for (const sql of OLD_ROWS) db.exec(sql);
  migrate(db, migrations);
  // Every statement the repository prepares, to ask SQLite for its plan.
  const statements: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    statements.push(sql);
    return prepare(sql);
  });
  const config = loadConfig({ DATABASE_URL: `file:${file}`, AUTH_TOKENS: 'x'.repeat(32) });
  const plants = plantRepository(sqliteParts(db, migrations, config, captureLogs().logger, RESOURCES));
  return {
    db,
    plants,
    statements,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The index a list statement of `query` must walk first, the plan each shape had before 012 with the tenant in
 * front: a tag's plants by plants_by_tag (the other orders then sort them), q in id order the narrow
 * plants_by_id_key, a count without tag plants_by_id_key, each other order its own index, id order the table.
 */
function indexOf(query: PlantListQuery, sql: string): string {
  if (query.tag !== undefined) return 'INDEX plants_by_tag (tenant=? AND tag=?';
  if (sql.startsWith('SELECT count')) return 'COVERING INDEX plants_by_id_key (tenant=?)';
  if (sql.startsWith('SELECT name_key')) return 'PRIMARY KEY (tenant=? AND id=?)';
  const sort = (query.sort ?? 'id').replace('-', '');
  if (sort === 'id') return query.search === undefined ? 'PRIMARY KEY (tenant=? AND id' : 'COVERING INDEX plants_by_id_key (tenant=? AND id';
  return { name: 'COVERING INDEX plants_by_name (tenant=?', createdAt: 'INDEX plants_by_created (tenant=?', updatedAt: 'INDEX plants_by_updated (tenant=?' }[sort] as string;
}

/** Every shape of list a request can ask for: each sort, with and without tag, q, a start (cursor), and a count. */
function listShapes(): PlantListQuery[] {
  const shapes: PlantListQuery[] = [];
  for (const sort of SORTS) {
    for (const tag of [undefined, 'shade']) {
      for (const search of [undefined, 'er']) {
        const idSort = sort === 'id' || sort === '-id';
        const starts = idSort ? [undefined, 1n] : [undefined, sort.endsWith('name') ? (['fern', 'Fern', 1n] as const) : ([TIME, 1n] as const)];
        for (const start of starts) {
          const query: PlantListQuery = { limit: 1, sort, count: true };
          if (tag !== undefined) query.tag = tag;
          if (search !== undefined) query.search = search;
          if (typeof start === 'bigint') query.after = start;
          else if (start !== undefined) query.from = start;
          shapes.push(query);
        }
      }
    }
  }
  return shapes;
}

describe('migration 012 (tenants) on a SQLite store written before it', () => {
  let subject: Subject;
  beforeAll(() => {
    subject = openOldStore();
  });
  afterAll(() => {
    subject.close();
  });

  it('when the store is upgraded, then every row it held is in the shared tenant', () => {
    const tenants = (table: string) => subject.db.prepare(`SELECT DISTINCT tenant FROM ${table} /* unchecked: test */`).pluck().all();

    expect(['plants', 'plant_events', 'idempotency_keys', 'webhook_outbox'].map(tenants)).toEqual([[''], [''], [''], ['']]);
    expect(subject.db.prepare('SELECT count(*) FROM plants /* unchecked: test */').pluck().get()).toBe(3n);
  });

  it('when a plant is read in the shared tenant, then it is as it was; in another tenant, it is missing', async () => {
    const shared = await subject.plants.findById(SHARED_TENANT, 1n);
    const other = await subject.plants.findById(ACME, 1n);

    expect(shared).toEqual({ json: `{"id":1,"name":"Fern","tag":"shade","createdAt":"${TIME}","updatedAt":"${TIME}"}`, version: 1n });
    expect(other).toBeUndefined();
  });

  it('when the shared tenant is listed, then it holds the old plants, keyed for search; another tenant holds none', async () => {
    const shared = await subject.plants.list(SHARED_TENANT, { limit: 10, search: 'moss', count: true });
    const other = await subject.plants.list(ACME, { limit: 10, count: true });

    expect(JSON.parse(shared.json)).toEqual([{ id: 1 + 2, name: 'Moss', tag: 'shade', createdAt: TIME, updatedAt: TIME }]);
    expect(shared.total).toBe(1);
    expect(other).toMatchObject({ json: '[]', total: 0 });
  });

  it('when the events are read, then the old ones are the shared tenant\'s', async () => {
    const all = await subject.plants.readEvents(0n, 10);
    const shared = await subject.plants.readTenantEvents(SHARED_TENANT, 0n, 10);
    const other = await subject.plants.readTenantEvents(ACME, 0n, 10);

    expect(all.map((event) => [event.tenant, event.pos])).toEqual([['', 1n], ['', 2n]]);
    expect(shared.map((event) => event.pos)).toEqual([1n, 2n]);
    expect(other).toEqual([]);
  });

  it('when every list shape is read, then each statement searches its order\'s index from the tenant, as before 012', async () => {
    const planned: { shape: string; sql: string; expected: string; plan: string[] }[] = [];
    for (const query of listShapes()) {
      const before = subject.statements.length;
      await subject.plants.list(ACME, query);
      for (const sql of subject.statements.slice(before)) {
        planned.push({ shape: JSON.stringify(query, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value)), sql, expected: indexOf(query, sql), plan: planOf(subject.db, sql) });
      }
    }

    expect(planned.length).toBeGreaterThanOrEqual(8 * 4 + 2 * 4 + 4);
    for (const { shape, sql, expected, plan } of planned) {
      const reads = plan.filter((line) => /\bplants\b/.test(line));
      // Every read of plants is a search from the tenant; the first (the page's walk) in the shape's index.
      expect({ shape, sql, scans: reads.filter((line) => !/^SEARCH plants USING .*\(tenant=\?/.test(line)) }).toEqual({ shape, sql, scans: [] });
      expect({ shape, sql, first: reads[0] }).toEqual({ shape, sql, first: expect.stringContaining(expected) });
    }
  });

  it('when a stream catches up, then its tenant\'s events are a range of plant_events_by_tenant', () => {
    expect(planOf(subject.db, 'SELECT pos FROM plant_events WHERE tenant = ? AND pos > ? ORDER BY pos LIMIT ?')).toEqual([
      expect.stringMatching(/^SEARCH plant_events USING COVERING INDEX plant_events_by_tenant \(tenant=\? AND rowid>\?\)/),
    ]);
  });
});

/** SQLite's plan of `sql`, one line per step, parameters bound to NULL (the plan does not depend on them). */
function planOf(db: Db, sql: string): string[] {
  const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const values = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
  return (statement.all(...values) as { detail: string }[]).map((row) => row.detail);
}

describe('a SQLite store started with tenants on', () => {
  const startWith = (seed: boolean, defaultName?: string) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-tenant-start-'));
    const file = path.join(dir, 'plants.db');
    if (seed) {
      const db = openDatabase(file, { busyTimeoutMs: 1000 });
      migrate(db, loadMigrations().slice(0, 11));
      db.exec(OLD_ROWS[0] as string);
      db.close();
    }
    // The store's own rule, whatever auth asks of the tokens: the config with tenants on, made here.
    const config = {
      ...loadConfig({ DATABASE_URL: `file:${file}`, AUTH_TOKENS: 'x'.repeat(32) }),
      tenants: { claim: 'sub', perTenantPerMinute: 0, ...(defaultName === undefined ? {} : { defaultName }) },
    };
    try {
      const store = createStore(config, captureLogs().logger, RESOURCES);
      void store.close();
      return 'started';
    } catch (error) {
      return error instanceof ConfigError ? error.message : error;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('when it holds plants stored before tenants and TENANT_DEFAULT is unset, then the start is refused naming TENANT_DEFAULT', () => {
    expect(startWith(true)).toBe('TENANT_DEFAULT: this store holds plants stored before tenants were turned on; set TENANT_DEFAULT to the name of the tenant that keeps them');
  });

  it('when TENANT_DEFAULT names their tenant, or the store holds no plant, then it starts', () => {
    expect([startWith(true, 'alice'), startWith(false)]).toEqual(['started', 'started']);
  });
});
