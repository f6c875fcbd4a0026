import { SHARED_TENANT } from '../../src/tenant';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { RESOURCES } from '../../src/resources';
import { createStore } from '../../src/store';
import { sqliteParts } from '../../src/store/store.sqlite';
import { plantRepository } from '../helpers/store-parts';
import type { PostgresStore } from '../../src/store/store.postgres';
import type { PlantRepository } from '../../src/plants/plant.repository';
import { uniqueId, plantText, plantsText, withTimes } from '../helpers/plants';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { captureLogs, type LogLine } from '../helpers/common';

// The contract of PlantRepository, run against each store: what keeps the two dialects the same.
type Subject = { plants: PlantRepository; logs: LogLine[]; close: () => Promise<void> };

const capture = () => captureLogs();

function sqliteSubject(): Promise<Subject> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-repo-'));
  const file = path.join(dir, 'plants.db');
  const db = openDatabase(file, { busyTimeoutMs: 1000 });
  const migrations = loadMigrations();
  migrate(db, migrations);
  const { logs, logger } = capture();
  const config = loadConfig({ DATABASE_URL: `file:${file}`, AUTH_TOKENS: 'x'.repeat(32) });
  return Promise.resolve({
    plants: plantRepository(sqliteParts(db, migrations, config, logger, RESOURCES)),
    logs,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  });
}

function repositoryContract(open: () => Promise<Subject>): void {
  let subject: Subject;
  beforeAll(async () => {
    subject = await open();
  });
  afterAll(async () => {
    await subject.close();
  });

  it.each([
    ['the smallest int64', -9223372036854775808n],
    ['the largest int64', 9223372036854775807n],
    ['2^53 + 1', 9007199254740993n],
  ])('when %s is stored, then the same id finds it again, exactly', async (_case, id) => {
    const created = await subject.plants.create(SHARED_TENANT, { id, name: `Edge ${id}` });
    const again = await subject.plants.create(SHARED_TENANT, { id, name: 'ignored' });
    const neighbour = await subject.plants.create(SHARED_TENANT, { id: id > 0n ? id - 1n : id + 1n, name: 'neighbour' });

    expect([created, again, neighbour.outcome]).toEqual([
      { outcome: 'created', stored: withTimes({ id, name: `Edge ${id}` }), version: expect.any(BigInt) },
      { outcome: 'conflict', stored: withTimes({ id, name: `Edge ${id}` }), version: created.version },
      'created',
    ]);
  });

  it('when the id exists, then create answers the stored plant, tag and all, and changes nothing', async () => {
    const id = BigInt(uniqueId());
    const { version } = await subject.plants.create(SHARED_TENANT, { id, name: 'Original', tag: 'indoor' });

    const outcome = await subject.plants.create(SHARED_TENANT, { id, name: 'Other' });
    const replayed = await subject.plants.create(SHARED_TENANT, { id, name: 'Original', tag: 'indoor' });

    expect([outcome, replayed]).toEqual([
      { outcome: 'conflict', stored: withTimes({ id, name: 'Original', tag: 'indoor' }), version },
      { outcome: 'replayed', stored: withTimes({ id, name: 'Original', tag: 'indoor' }), version },
    ]);
  });

  it('when creates for one id arrive in one turn, then the first wins and the others see it, in arrival order', async () => {
    const id = BigInt(uniqueId());
    const others = Array.from({ length: 20 }, () => BigInt(uniqueId()));

    const outcomes = await Promise.all([
      ...others.map((other) => subject.plants.create(SHARED_TENANT, { id: other, name: 'filler' })),
      subject.plants.create(SHARED_TENANT, { id, name: 'First' }),
      subject.plants.create(SHARED_TENANT, { id, name: 'Second', tag: 't' }),
    ]);

    expect(outcomes.slice(-2)).toEqual([
      { outcome: 'created', stored: withTimes({ id, name: 'First' }), version: expect.any(BigInt) },
      { outcome: 'conflict', stored: withTimes({ id, name: 'First' }), version: expect.any(BigInt) },
    ]);
    expect(outcomes.slice(0, -2).every((outcome) => outcome.outcome === 'created')).toBe(true);
  });

  it('when 50 creates arrive in one turn, then they share one commit', async () => {
    const before = subject.logs.filter((line) => line.msg === 'group commit').length;

    await Promise.all(Array.from({ length: 50 }, () => subject.plants.create(SHARED_TENANT, { id: BigInt(uniqueId()), name: 'batched' })));

    expect(subject.logs.filter((line) => line.msg === 'group commit').slice(before).map((line) => line.rows)).toEqual([50]);
  });
}

describe('PlantRepository on SQLite', () => {
  repositoryContract(sqliteSubject);
});

describeWith('postgres', 'PlantRepository on PostgreSQL', (server) => {
  let database: TestDatabase;
  let store: PostgresStore;

  repositoryContract(async () => {
    database = await createTestDatabase(server);
    const { logs, logger } = capture();
    store = createStore(loadConfig({ DATABASE_URL: database.url, AUTH_TOKENS: 'x'.repeat(32) }), logger, RESOURCES) as PostgresStore;
    await store.open();
    return {
      plants: plantRepository(store),
      logs,
      close: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  it('when a plant is read by id, then its JSON text carries the id digit for digit', async () => {
    const id = 9223372036854775001n;
    await plantRepository(store).create(SHARED_TENANT, { id, name: 'Exact "quoted"\n', tag: 'big' });

    const found = await plantRepository(store).findById(SHARED_TENANT, id);
    const missing = await plantRepository(store).findById(SHARED_TENANT, id + 1n);

    expect({ found, missing }).toEqual({
      found: { json: plantText('{"id":9223372036854775001,"name":"Exact \\"quoted\\"\\n","tag":"big"}'), version: expect.any(BigInt) },
      missing: undefined,
    });
  });

  it('when plants are listed, then they come in ascending id after the cursor, by tag, at most limit', async () => {
    const base = BigInt(uniqueId()) * 1000n;
    const ids = [base + 5n, base + 1n, base + 3n, base + 2n, base + 4n];
    await Promise.all(ids.map((id, index) => plantRepository(store).create(SHARED_TENANT, { id, name: `L${index}`, ...(index % 2 === 0 ? { tag: `tag-${base}` } : {}) })));

    const page = await plantRepository(store).list(SHARED_TENANT, { limit: 2, after: base + 1n });
    const tagged = await plantRepository(store).list(SHARED_TENANT, { limit: 10, tag: `tag-${base}` });

    await plantRepository(store).create(SHARED_TENANT, { id: -9223372036854775808n, name: 'the smallest id' });
    const first = await plantRepository(store).list(SHARED_TENANT, { limit: 1 });
    const pastTheEnd = await plantRepository(store).list(SHARED_TENANT, { limit: 5, after: 9223372036854775807n });

    expect(page).toEqual({ json: plantsText([`{"id":${base + 2n},"name":"L3"}`, `{"id":${base + 3n},"name":"L2","tag":"tag-${base}"}`]), nextAfter: base + 3n, position: expect.any(BigInt) as unknown });
    expect({ first, pastTheEnd }).toEqual({
      // An earlier test may have stored the smallest id first, under its own name.
      first: { json: expect.stringMatching(/^\[\{"id":-9223372036854775808,"name":"[^"]+","createdAt":"[^"]+","updatedAt":"[^"]+"\}\]$/) as unknown, nextAfter: -9223372036854775808n, position: expect.any(BigInt) as unknown },
      pastTheEnd: { json: '[]', position: expect.any(BigInt) as unknown },
    });
    expect(tagged).toEqual({
      json: plantsText([`{"id":${base + 3n},"name":"L2","tag":"tag-${base}"}`, `{"id":${base + 4n},"name":"L4","tag":"tag-${base}"}`, `{"id":${base + 5n},"name":"L0","tag":"tag-${base}"}`]),
      position: expect.any(BigInt) as unknown,
    });
  });

  it('when a create, a delete and a create of one id arrive in one turn, then they apply in arrival order', async () => {
    const id = BigInt(uniqueId());

    const [created, deleted, recreated, deletedAgainMissing] = await Promise.all([
      plantRepository(store).create(SHARED_TENANT, { id, name: 'Before' }),
      plantRepository(store).delete(SHARED_TENANT, id),
      plantRepository(store).create(SHARED_TENANT, { id, name: 'After' }),
      plantRepository(store).delete(SHARED_TENANT, id + 1n),
    ]);

    expect({ created, deleted, recreated, deletedAgainMissing }).toEqual({
      created: { outcome: 'created', stored: withTimes({ id, name: 'Before' }), version: expect.any(BigInt) },
      deleted: { outcome: 'deleted' },
      recreated: { outcome: 'created', stored: withTimes({ id, name: 'After' }), version: expect.any(BigInt) },
      deletedAgainMissing: { outcome: 'missing' },
    });
    expect((await plantRepository(store).findById(SHARED_TENANT, id))?.json).toEqual(plantText(`{"id":${id},"name":"After"}`));
  });

  it('when the database default says synchronous_commit=off, then the service sessions still commit synchronously', async () => {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${database.name} SET synchronous_commit = off`);
    await admin.end();
    const probe = new pg.Client({ connectionString: database.url });
    await probe.connect();
    const { rows: defaults } = await probe.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    await probe.end();
    // A fresh pool, so its sessions start after the change.
    const { logger } = capture();
    const fresh = createStore(loadConfig({ DATABASE_URL: database.url, AUTH_TOKENS: 'x'.repeat(32) }), logger, RESOURCES) as PostgresStore;

    const { rows } = await fresh.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    await fresh.close();

    expect({ databaseDefault: defaults[0]?.synchronous_commit, service: rows[0]?.synchronous_commit }).toEqual({ databaseDefault: 'off', service: 'on' });
  });
});
