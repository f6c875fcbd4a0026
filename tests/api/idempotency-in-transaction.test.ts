import { SHARED_TENANT } from '../../src/tenant';
import pg from 'pg';
import pino from 'pino';
import { SqliteHealth } from '../../src/db/health.sqlite';
import { createAnswer } from '../../src/plants/plant.answers';
import { PostgresPlantRepository } from '../../src/plants/plant.repository.postgres';
import { SqlitePlantRepository } from '../../src/plants/plant.repository.sqlite';
import type { KeepAnswer, PlantRepository } from '../../src/plants/plant.repository';
import { appForAll } from '../helpers/fixtures';
import { aNewPlant, uniqueId } from '../helpers/plants';
import { queryJson } from '../helpers/postgres';
import { bearer, storedRows } from '../helpers/test-app';

// Issue 34: a keyed write's answer is written by the store in the write's own transaction, so no crash between
// the commit and the answer can leave the write without it. Both stores (the postgres project runs it again).
const app = appForAll();

type KeyRow = { status: number; etag: string | null; location: string | null; body: string | null };

/** The key's row, read on a connection of its own: what is committed. */
function keyRow(caller: string, key: string): KeyRow | undefined {
  const where = `caller = '${caller}' AND key = '${key}'`;
  if (app.store === 'postgres') {
    const sql = `SELECT coalesce((SELECT row_to_json(k) FROM (SELECT status, etag, location, body FROM idempotency_keys WHERE ${where}) k), 'null'::json)`;
    return queryJson<KeyRow | null>(app.dbPath, sql) ?? undefined;
  }
  const row = app.inspect().prepare(`SELECT status, etag, location, body FROM idempotency_keys WHERE ${where}`).get() as KeyRow | undefined;
  return row === undefined ? undefined : { ...row, status: Number(row.status) };
}

const keyOf = (render: KeepAnswer['render']): KeepAnswer => ({ caller: 'tx-test', key: `key-${uniqueId()}`, fingerprint: 'f', expiresAt: Date.now() + 60_000, render });
const stored = (id: bigint) => storedRows(app).some((row) => row.id === id);

describe('Idempotency-Key stored in the write transaction', () => {
  // A repository of its own over the app's store, so a test can hand it the key and renderer the controller would.
  let repository: PlantRepository;
  let close = () => Promise.resolve();
  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    if (app.store === 'postgres') {
      const pool = new pg.Pool({ connectionString: app.dbPath, max: 2 });
      const postgres = new PostgresPlantRepository(pool, logger, 10_000);
      await postgres.markReady();
      repository = postgres;
      close = () => pool.end();
    } else repository = new SqlitePlantRepository(app.db, logger, new SqliteHealth(app.db, logger, 2000));
  });
  afterAll(() => close());

  it('when a keyed write commits, then its key row with the rendered answer is committed with it', async () => {
    const plant = { id: BigInt(uniqueId()), name: 'Kept' };
    const keep = keyOf(createAnswer);

    const outcome = await repository.create(SHARED_TENANT, plant, { keep });

    expect(outcome.outcome).toBe('created');
    expect(keep.kept).toBe(true);
    const version = (outcome as { version: bigint }).version;
    expect(keyRow(keep.caller, keep.key)).toEqual({ status: 200, etag: `"${version}"`, location: null, body: '{"name":"Kept"}' });
  });

  it('when a keyed write fails by the write rule (a conflict), then no key row is written', async () => {
    const plant = { id: BigInt(uniqueId()), name: 'First' };
    await repository.create(SHARED_TENANT, plant);
    const keep = keyOf(createAnswer);

    const outcome = await repository.create(SHARED_TENANT, { ...plant, name: 'Other' }, { keep });

    expect(outcome.outcome).toBe('conflict');
    expect(keep.kept).toBeUndefined();
    expect(keyRow(keep.caller, keep.key)).toBeUndefined();
  });

  it('when the key row cannot be written, then the write is taken back with it: no plant, no key', async () => {
    const plant = { id: BigInt(uniqueId()), name: 'Never' };
    const keep = keyOf(() => {
      throw new Error('the answer cannot be rendered');
    });

    await expect(repository.create(SHARED_TENANT, plant, { keep })).rejects.toThrow();

    expect(stored(plant.id)).toBe(false);
    expect(keyRow(keep.caller, keep.key)).toBeUndefined();
  });

  it('when two writes with one key reach one group commit, then the first applies, the second is taken and writes nothing, and the rest of the group commits', async () => {
    const first = { id: BigInt(uniqueId()), name: 'First with the key' };
    const second = { id: BigInt(uniqueId()), name: 'Second with the key' };
    const unkeyed = { id: BigInt(uniqueId()), name: 'Without a key' };
    const keep = keyOf(createAnswer);

    // Submitted in one event-loop turn: one group commit (the HTTP step keeps a second request with the key out; a store must not rely on it).
    const outcomes = await Promise.allSettled([repository.create(SHARED_TENANT, first, { keep }), repository.create(SHARED_TENANT, second, { keep: { ...keep } }), repository.create(SHARED_TENANT, unkeyed)]);

    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.outcome : (outcome.reason as { reason?: string }).reason))).toEqual(['created', 'idempotency_key_in_use', 'created']);
    expect([first, second, unkeyed].map((plant) => stored(plant.id))).toEqual([true, false, true]);
    expect(keyRow(keep.caller, keep.key)?.body).toBe('{"name":"First with the key"}');
  });

  it('when a keyed batch commits through HTTP, then the key row holds its answer byte for byte as sent', async () => {
    const key = `key-${uniqueId()}`;
    const plant = aNewPlant();
    const response = await app.request
      .post('/plants/batch')
      .set({ ...bearer(), 'Content-Type': 'application/json', 'Idempotency-Key': key })
      .send(JSON.stringify({ operations: [{ op: 'create', plant }, { op: 'update', id: plant.id, patch: { name: 'Renamed' } }] }));

    expect(response.status).toBe(200);
    const rows = app.store === 'postgres'
      ? queryJson<KeyRow[]>(app.dbPath, `SELECT coalesce(json_agg(json_build_object('status', status, 'body', body)), '[]') FROM idempotency_keys WHERE key = '${key}'`)
      : (app.inspect().prepare('SELECT status, body FROM idempotency_keys WHERE key = ?').all(key) as KeyRow[]).map((row) => ({ ...row, status: Number(row.status) }));
    expect(rows).toEqual([{ status: 200, body: response.text }]);
  });
});
