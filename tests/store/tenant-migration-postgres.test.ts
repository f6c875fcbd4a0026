import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../../src/db/migrate.postgres';
import { listStatement } from '../../src/plants/plant.list.postgres';
import type { PlantListQuery } from '../../src/plants/plant.list-query';
import { SORTS } from '../../src/plants/plant.schemas';
import type { TenantKey } from '../../src/tenant';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';

// Tenants on PostgreSQL (migrations/postgres/015–017): a store of the version before keeps its rows in the shared
// tenant '', the previous version's replicas go on writing during a rolling upgrade (its plants_write overloads and
// its keyed answers, all in ''), and every shape of GET /plants reads through an index led by the tenant.

const T = '2026-11-27T09:41:07.250Z';
const BEFORE_TENANTS = '014-keyed-write-answers.sql';

// The previous version's calls, as its src/plants/plant.write.postgres.ts sent them: 009's overload (19 arguments).
const WRITE_009 = `SELECT plants_write($1::bigint, $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::bigint[], $11::bigint[], $12::text[], $13::bigint[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[]) AS base`;
const create009 = (id: number, name: string) => [Date.now(), [], [], [id], [name], [null], [T], [T], [name.toLowerCase()], [1], [], ['created'], [id], [name], [null], [T], [T], [null], [null]];
const rename009 = (id: number, version: string, name: string) =>
  [Date.now(), [id], [version], [id], [name], [null], [T], [T], [name.toLowerCase()], [1], [], ['updated'], [id], [name], [null], [T], [T], ['x'], [null]];
const remove009 = (id: number, version: string) => [Date.now(), [id], [version], [], [], [], [], [], [], [], [id], ['deleted'], [id], [null], [null], [null], [null], [null], [null]];
// 008's overload (13 arguments): replicas two versions back.
const WRITE_008 = 'SELECT plants_write($1::bigint, $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[]) AS base';
const create008 = (id: number, name: string) => [Date.now(), [], [], [id], [name], [null], [1], [], ['created'], [id], [name], [null], [null]];
// The previous version's keyed answer (014: the key's insert with idempotency_fill) and its webhook row.
const KEY_014 = `INSERT INTO idempotency_keys (caller, key, fingerprint, status, etag, location, body, expires_at)
  VALUES ($1, $2, 'f', 201, idempotency_fill(E'"\\x011\\x02"', 41), NULL, NULL, now() + interval '1 hour')
  ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint WHERE idempotency_keys.expires_at <= now()`;
const OUTBOX_OLD = `INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, event_type, trace_context, next_attempt_at, created_at, updated_at)
  VALUES ($1, 'https://hooks.example/a', $2, '{}', 'plant.created', NULL, 0, 0, 0)`;
// This version's overload (23 arguments): one create in a tenant.
const WRITE_017 = `SELECT plants_write(${Array.from({ length: 23 }, (_, index) => `$${index + 1}`).join(', ')}) AS base`;
const create017 = (tenant: string, id: number, name: string) =>
  [Date.now(), [], [], [], [tenant], [id], [name], [null], [T], [T], [name.toLowerCase()], [1], [], [], [tenant], ['created'], [id], [name], [null], [T], [T], [null], [null]];

describeWith('postgres', 'tenants on PostgreSQL: the upgrade', (server) => {
  let database: TestDatabase;
  let client: pg.Client;
  const options = () => ({ url: database.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 });
  const migrations = loadPostgresMigrations();
  const rows = async (sql: string) => (await client.query<Record<string, unknown>>(sql)).rows;

  beforeEach(async () => {
    database = await createTestDatabase(server);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });

  afterEach(async () => {
    await client.end();
    await database.drop();
  });

  it('when a store of the previous version is migrated, then its plants, events, keys and webhook rows stay in the shared tenant', async () => {
    await migratePostgres(options(), migrations.slice(0, migrations.findIndex((migration) => migration.name === BEFORE_TENANTS) + 1));
    await client.query(WRITE_009, create009(1, 'Fern'));
    await client.query(KEY_014, ['token:a', 'k1']);
    await client.query(OUTBOX_OLD, ['e1', 1]);

    const applied = await migratePostgres(options(), migrations);

    expect(applied).toEqual(['015-tenant-columns.sql', '016-tenant-indexes.sql', '017-tenant-keys.sql']);
    expect({
      plants: await rows('SELECT tenant, id::text, name FROM plants'),
      events: await rows('SELECT tenant, pos::text, kind FROM plant_events'),
      keys: await rows('SELECT tenant, caller, key, etag FROM idempotency_keys'),
      outbox: await rows('SELECT tenant, event_id FROM webhook_outbox'),
      primaryKey: await rows("SELECT pg_get_indexdef('plants_pkey'::regclass) AS definition"),
    }).toEqual({
      plants: [{ tenant: '', id: '1', name: 'Fern' }],
      events: [{ tenant: '', pos: '1', kind: 'created' }],
      keys: [{ tenant: '', caller: 'token:a', key: 'k1', etag: '"42"' }],
      outbox: [{ tenant: '', event_id: 'e1' }],
      primaryKey: [{ definition: 'CREATE UNIQUE INDEX plants_pkey ON public.plants USING btree (tenant, id)' }],
    });
  });

  it('when a replica of the previous version writes after 017 (a rolling upgrade), then its creates, edits and deletes act in the shared tenant alone', async () => {
    await migratePostgres(options(), migrations);
    await client.query(WRITE_017, create017('acme', 7, 'Acme seven'));

    await client.query(WRITE_009, create009(7, 'Shared seven'));
    const version = String((await rows("SELECT version FROM plants WHERE tenant = '' AND id = 7"))[0]?.version);
    const renamed = await client.query(WRITE_009, rename009(7, version, 'Shared renamed'));
    await client.query(WRITE_008, create008(8, 'Old eight'));
    await client.query(WRITE_009, create009(9, 'Doomed'));
    const doomed = String((await rows("SELECT version FROM plants WHERE tenant = '' AND id = 9"))[0]?.version);
    await client.query(WRITE_009, remove009(9, doomed));
    // A version the shared row no longer has: the check reads the shared tenant's row, not acme's.
    const stale = await client.query(WRITE_009, rename009(7, version, 'Too late'));
    await client.query(KEY_014, ['token:a', 'k2']);
    await client.query(OUTBOX_OLD, ['e2', 7]);

    expect({ renamed: renamed.rows[0]?.base === null, stale: stale.rows[0]?.base }).toEqual({ renamed: false, stale: null });
    expect({
      plants: await rows('SELECT tenant, id::text, name FROM plants ORDER BY tenant, id'),
      events: await rows('SELECT tenant, plant_id::text AS id, kind FROM plant_events ORDER BY pos'),
      keys: await rows('SELECT tenant, key FROM idempotency_keys'),
      outbox: await rows('SELECT tenant, event_id FROM webhook_outbox'),
    }).toEqual({
      plants: [
        { tenant: '', id: '7', name: 'Shared renamed' },
        { tenant: '', id: '8', name: 'Old eight' },
        { tenant: 'acme', id: '7', name: 'Acme seven' },
      ],
      events: [
        { tenant: 'acme', id: '7', kind: 'created' },
        { tenant: '', id: '7', kind: 'created' },
        { tenant: '', id: '7', kind: 'updated' },
        { tenant: '', id: '8', kind: 'created' },
        { tenant: '', id: '9', kind: 'created' },
        { tenant: '', id: '9', kind: 'deleted' },
      ],
      keys: [{ tenant: '', key: 'k2' }],
      outbox: [{ tenant: '', event_id: 'e2' }],
    });
  });

  it('when a write of the previous version waits on 017\'s lock, then it lands in the shared tenant once 017 commits', async () => {
    await migratePostgres(options(), migrations.slice(0, migrations.findIndex((migration) => migration.name === '016-tenant-indexes.sql') + 1));
    const keys017 = migrations.find((migration) => migration.name === '017-tenant-keys.sql');
    await client.query('BEGIN');
    await client.query(keys017?.sql ?? '');
    const writer = new pg.Client({ connectionString: database.url });
    await writer.connect();

    const write = writer.query(WRITE_009, create009(5, 'Waited'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.query('COMMIT');
    const written = await write.then((result) => result.rows[0]?.base !== null, (error: Error) => error.message);
    await writer.end();

    expect({ written, plants: await rows('SELECT tenant, id::text FROM plants') }).toEqual({ written: true, plants: [{ tenant: '', id: '5' }] });
  });

  it('when a replica of the previous version reads by id after 017, then a plain index on id still serves it', async () => {
    await migratePostgres(options(), migrations);

    const plan = await rows("EXPLAIN (FORMAT JSON) SELECT id, name FROM plants WHERE id = ANY('{1,2}'::bigint[])");

    expect(indexesOf(plan)).toEqual(['plants_by_id']);
  });
});

/** The indexes a plan reads through, and 'seq' for a whole-table scan of plants. */
function indexesOf(explained: Record<string, unknown>[]): string[] {
  const found = new Set<string>();
  const walk = (node: Record<string, unknown>) => {
    // Index, index-only and bitmap index scans name their index; a bitmap heap scan's index is its child's.
    if (typeof node['Index Name'] === 'string') found.add(node['Index Name']);
    else if (node['Relation Name'] === 'plants' && node['Node Type'] === 'Seq Scan') found.add('seq');
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(((explained[0]?.['QUERY PLAN'] as Record<string, unknown>[])[0] as { Plan: Record<string, unknown> }).Plan);
  return [...found].sort();
}

// The plants' indexes led by the tenant (migrations/postgres/016, 017).
const TENANT_LEADING = ['plants_pkey', 'plants_tenant_by_tag', 'plants_tenant_by_name', 'plants_tenant_by_created', 'plants_tenant_by_updated'];
const TENANTS = 200;
const PER_TENANT = 100;

describeWith('postgres', 'tenants on PostgreSQL: the list plans', (server) => {
  let database: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase(server);
    await migratePostgres({ url: database.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 }, loadPostgresMigrations());
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    // 200 tenants of 100 plants, ids 1–100 in each, a tag among ten, a name and times of their own.
    await client.query(`INSERT INTO plants (tenant, id, name, tag, name_key, created_at, updated_at, version)
      SELECT 't' || t, i, 'Plant ' || t || ' ' || i, 'tag' || (i % 10), 'plant ' || t || ' ' || i,
        plant_time_text(1700000000000 + t * 1000 + i), plant_time_text(1700000000000 + t * 1000 + i), 0
      FROM generate_series(1, ${TENANTS}) AS t, generate_series(1, ${PER_TENANT}) AS i`);
    await client.query('VACUUM ANALYZE plants');
  });

  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  const shapes: [string, PlantListQuery][] = SORTS.flatMap((sort): [string, PlantListQuery][] => {
    const from = sort.includes('name') ? { from: ['plant t5 5', 'Plant t5 5', 5n] as const } : sort.includes('At') ? { from: [T, 5n] as const } : { after: 5n };
    return [
      [`${sort}`, { limit: 20, sort }],
      [`${sort} tag`, { limit: 20, sort, tag: 'tag3' }],
      [`${sort} from`, { limit: 20, sort, ...from }],
      [`${sort} tag count`, { limit: 20, sort, tag: 'tag3', count: true }],
      [`${sort} q of 2`, { limit: 20, sort, search: '5 ' }],
      [`${sort} q of 3`, { limit: 20, sort, search: 't5 ' }],
      [`${sort} q of 3 count`, { limit: 20, sort, search: 't5 ', count: true }],
    ];
  });

  it.each(shapes)('when a tenant lists %s, then every read of plants goes through an index led by the tenant', async (_shape, query) => {
    const { text, values } = listStatement('t5' as TenantKey, query);

    const plan = (await client.query<Record<string, unknown>>({ text: `EXPLAIN (FORMAT JSON) ${text}`, values })).rows;

    const used = indexesOf(plan);
    expect({ used, others: used.filter((index) => !TENANT_LEADING.includes(index)) }).toEqual({ used: expect.arrayContaining([expect.any(String)]) as unknown, others: [] });
  });
});
