import { SHARED_TENANT } from '../../src/tenant';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { loadPostgresMigrations, migratePostgres } from '../../src/db/migrate.postgres';
import type { ChangeEvent, PlantEventLog } from '../../src/plants/plant.events';
import type { PlantRepository } from '../../src/plants/plant.repository';
import { RESOURCES } from '../../src/resources';
import { createStore } from '../../src/store';
import type { PostgresStore } from '../../src/store/store.postgres';
import { sqliteParts } from '../../src/store/store.sqlite';
import { captureLogs } from '../helpers/common';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { plantRepository } from '../helpers/store-parts';

// A store written by the version before plants had times and search keys, upgraded: the migration takes each
// plant's times from the events still kept, the rest get the oldest kept event's time, old events gain what the
// feed's search filter reads, and the repository fills the search keys when it opens the store.

const T1 = Date.UTC(2026, 10, 20, 8, 0, 0, 1);
const T2 = Date.UTC(2026, 10, 21, 9, 30, 15, 250);
const T3 = Date.UTC(2026, 10, 22, 23, 59, 59, 999);
const T4 = Date.UTC(2026, 10, 23, 0, 0, 0, 0);
const text = (ms: number) => new Date(ms).toISOString();

// Plant 1: created at T1, renamed at T2 (its version). Plant 2: stored before the feed (version 0). Plant 3: its
// last change (position 5) already pruned. Plant 4: created at T3, deleted at T4 (the old delete event had no name).
const OLD_ROWS = [
  "INSERT INTO plants (id, name, tag, version) VALUES (1, 'Ferny', 'shade', 2), (2, 'ǄUNGLE ﬁcus', NULL, 0), (3, 'Ivy', 'hanging', 5)",
  'INSERT INTO plant_events (pos, kind, plant_id, name, tag, prev_tag, at) VALUES ' +
    `(1, 'created', 1, 'Fern', 'shade', NULL, ${T1}), (2, 'updated', 1, 'Ferny', 'shade', 'shade', ${T2}), ` +
    `(3, 'created', 4, 'Gone', 'x', NULL, ${T3}), (4, 'deleted', 4, NULL, 'x', NULL, ${T4})`,
];

type Subject = { plants: PlantRepository & PlantEventLog; keys: () => Promise<[bigint, string][]>; close: () => Promise<void> };

function contract(open: () => Promise<Subject>): void {
  let subject: Subject;
  beforeAll(async () => {
    subject = await open();
  });
  afterAll(async () => {
    await subject.close();
  });

  it('when a plant has its events, then its times are theirs; without them, the oldest kept event\'s time', async () => {
    const read = await Promise.all([1n, 2n, 3n].map(async (id) => (await subject.plants.findById(SHARED_TENANT, id))?.json));

    expect(read).toEqual([
      `{"id":1,"name":"Ferny","tag":"shade","createdAt":"${text(T1)}","updatedAt":"${text(T2)}"}`,
      `{"id":2,"name":"ǄUNGLE ﬁcus","createdAt":"${text(T1)}","updatedAt":"${text(T1)}"}`,
      `{"id":3,"name":"Ivy","tag":"hanging","createdAt":"${text(T1)}","updatedAt":"${text(T1)}"}`,
    ]);
  });

  it('when the store is opened, then every plant has the search key of its name', async () => {
    expect(await subject.keys()).toEqual([
      [1n, 'ferny'],
      [2n, 'd\u017Eungle ficus'], // NFKC splits the digraph Ǆ into D and Ž
      [3n, 'ivy'],
    ]);
  });

  it('when old events are read, then they carry the times, the name an edit replaced and a deleted plant\'s name', async () => {
    const events = (await subject.plants.readEvents(0n, 10)).map(({ at: _at, ...event }): Omit<ChangeEvent, 'at'> => event);

    expect(events).toEqual([
      { tenant: SHARED_TENANT, pos: 1n, kind: 'created', id: 1n, name: 'Fern', tag: 'shade', createdAt: text(T1), updatedAt: text(T1) },
      { tenant: SHARED_TENANT, pos: 2n, kind: 'updated', id: 1n, name: 'Ferny', tag: 'shade', createdAt: text(T1), updatedAt: text(T2), prevName: 'Fern', prevTag: 'shade' },
      { tenant: SHARED_TENANT, pos: 3n, kind: 'created', id: 4n, name: 'Gone', tag: 'x', createdAt: text(T3), updatedAt: text(T3) },
      { tenant: SHARED_TENANT, pos: 4n, kind: 'deleted', id: 4n, name: 'Gone', tag: 'x' },
    ]);
  });
}

describe('plants stored before times and search keys, on SQLite', () => {
  contract(() => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-times-'));
    const file = path.join(dir, 'plants.db');
    const db = openDatabase(file, { busyTimeoutMs: 1000 });
    const migrations = loadMigrations();
    const before = migrations.findIndex((migration) => migration.name === '008-plant-times-and-keys.sql');
    migrate(db, migrations.slice(0, before));
    for (const sql of OLD_ROWS) db.exec(sql);
    migrate(db, migrations);
    const store = sqliteParts(db, migrations, loadConfig({ DATABASE_URL: `file:${file}`, AUTH_TOKENS: 'x'.repeat(32) }), captureLogs().logger, RESOURCES);
    return Promise.resolve({
      plants: plantRepository(store),
      keys: () => Promise.resolve(db.prepare('SELECT id, name_key FROM plants ORDER BY id').raw().all() as [bigint, string][]),
      close: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      },
    });
  });
});

describeWith('postgres', 'plants stored before times and search keys, on PostgreSQL', (server) => {
  let database: TestDatabase;

  contract(async () => {
    database = await createTestDatabase(server);
    const migrations = loadPostgresMigrations();
    const before = migrations.findIndex((migration) => migration.name === '009-plant-times-and-keys.sql');
    await migratePostgres({ url: database.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 }, migrations.slice(0, before));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    for (const sql of OLD_ROWS) await client.query(sql);
    await client.query('UPDATE plant_event_counter SET last_pos = 5');
    const store = createStore(loadConfig({ DATABASE_URL: database.url, AUTH_TOKENS: 'x'.repeat(32) }), captureLogs().logger, RESOURCES) as PostgresStore;
    await store.open();
    return {
      plants: plantRepository(store),
      keys: async () => (await client.query<{ id: string; name_key: string }>('SELECT id::text, name_key FROM plants ORDER BY id')).rows.map((row) => [BigInt(row.id), row.name_key]),
      close: async () => {
        await client.end();
        await store.close();
        await database.drop();
      },
    };
  });
});
