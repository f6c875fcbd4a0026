// R2 of the tenants section (bench/tenants.section.ts): reads in one of STORED / 100 tenants of 100 plants against
// a one-tenant store of STORED and a store of 100, on SQLite and on PostgreSQL (BENCH_DATABASE_URL): first page,
// sort=name, q and an exact count, throughput and p50 in alternating rounds. The stores are written by SQL into
// the schema the service made, names as bench/create.section.ts writes them (`Stored plant <id>`).
import type autocannon from 'autocannon';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { storeOfPlants } from './create.section';
import { alternate, f2, failures, freshStore, measure, row, start, STORED, TABLE_HEAD, type Figures } from './lib';
import { admin, freshDatabase } from './postgres.section';

export const PLANTS_PER_TENANT = 100;
export const TENANTS = Math.max(1, Math.floor(STORED / PLANTS_PER_TENANT));

/** How R2 acts: the service's environment with tenants on, the admin token, and the default tenant's name. */
export type ReadsSetup = { env: Record<string, string>; token: string; defaultTenant: string };

const QUERIES = { 'first page': '/plants', 'sort=name': '/plants?sort=name', q: '/plants?q=plant%2077', count: '/plants?limit=1' } as const;
type Query = keyof typeof QUERIES;
type Stores = { many: string; one: string; small: string; drop: () => Promise<void> };

/**
 * GETs of one query by the admin token, each acting in a random one of 1,000 tenants spread over TENANTS, or in
 * the default tenant. One admin token: static tokens are compared in turn, so 10,000 token lines would measure
 * the token set (per-user tenants come from JWTs).
 */
function readsIn(query: Query, setup: ReadsSetup, many: boolean): autocannon.Request[] {
  const headers: Record<string, string> = { authorization: `Bearer ${setup.token}`, ...(query === 'count' ? { prefer: 'count=exact' } : {}) };
  const step = Math.max(1, Math.floor(TENANTS / 1000));
  const names = many ? Array.from({ length: Math.min(1000, TENANTS) }, (_, index) => `t${index * step}`) : [setup.defaultTenant];
  const pick = () => names[Math.floor(Math.random() * names.length)] as string;
  return [{ method: 'GET', path: QUERIES[query], headers, setupRequest: (request) => ({ ...request, headers: { ...headers, 'act-as-tenant': pick() } }) }];
}

/** The many-tenant SQLite store: tenants `t0`… with ids 1–100 each. */
async function sqliteManyTenants(): Promise<string> {
  const url = freshStore(`tenants-${TENANTS}`);
  const server = await start('service', url);
  await server.stop();
  const db = new Database(url.slice('file:'.length));
  const insert = db.prepare('INSERT INTO plants (tenant, id, name, tag) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (let tenant = 0; tenant < TENANTS; tenant += 1) {
      for (let id = 1; id <= PLANTS_PER_TENANT; id += 1) insert.run(`t${tenant}`, id, `Stored plant ${id}`, id % 3 === 0 ? null : 'seeded');
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return url.slice('file:'.length);
}

/** A copy of a SQLite template the service has started on once, filling every search key, so q reads a filled index. */
async function keyed(name: string, template: string, env: Record<string, string>): Promise<string> {
  const url = freshStore(name, template);
  const server = await start('service', url, env);
  try {
    const db = new Database(url.slice('file:'.length), { readonly: true });
    const unkeyed = db.prepare('SELECT count(*) AS n FROM plants WHERE name_key IS NULL');
    for (let waited = 0; (unkeyed.get() as { n: number }).n > 0 && waited < 600; waited += 1) await new Promise((resolve) => setTimeout(resolve, 1000));
    db.close();
  } finally {
    await server.stop();
  }
  return url;
}

async function sqliteStores(setup: ReadsSetup): Promise<Stores> {
  return {
    many: await keyed('tenants-many-keyed', await sqliteManyTenants(), setup.env),
    one: await keyed('tenants-one-keyed', await storeOfPlants(), setup.env),
    small: await keyed('tenants-small-keyed', await storeOfPlants(PLANTS_PER_TENANT), setup.env),
    drop: () => Promise.resolve(),
  };
}

/** A PostgreSQL database the service migrated, with `count` plants: in tenants of 100 (`many`) or all in ''. */
async function postgresStore(count: number, many: boolean): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = await freshDatabase();
  const server = await start('service', database.url);
  await server.stop();
  const id = many ? `(g - 1) % ${PLANTS_PER_TENANT} + 1` : 'g';
  const tenant = many ? `'t' || ((g - 1) / ${PLANTS_PER_TENANT})` : "''";
  await admin(async (client: pg.Client) => {
    await client.query(
      `INSERT INTO plants (tenant, id, name, tag, version, created_at, updated_at, name_key)
       SELECT ${tenant}, ${id}, 'Stored plant ' || ${id}, CASE WHEN ${id} % 3 = 0 THEN NULL ELSE 'seeded' END, g,
              plant_time_text(1735689600000 + g), plant_time_text(1735689600000 + g), 'stored plant ' || ${id}
       FROM generate_series(1, $1::bigint) AS g`,
      [count],
    );
    await client.query('UPDATE plant_event_counter SET last_pos = $1', [count]);
    await client.query('VACUUM ANALYZE plants');
  }, database.url);
  return database;
}

async function postgresStores(): Promise<Stores> {
  const [many, one, small] = [await postgresStore(STORED, true), await postgresStore(STORED, false), await postgresStore(PLANTS_PER_TENANT, false)];
  return { many: many.url, one: one.url, small: small.url, drop: async () => void (await Promise.all([many.drop(), one.drop(), small.drop()])) };
}

/** Why this build cannot measure tenants on `dialect`, or undefined when that store isolates them (TENANT_CLAIM starts). */
export function refusal(dialect: 'sqlite' | 'postgres'): string | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const store = require(`../dist/store/store.${dialect}`) as { ISOLATES_TENANTS?: boolean };
  const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  return store.ISOLATES_TENANTS === true ? undefined : `the ${name} store refuses TENANT_CLAIM in this build (ISOLATES_TENANTS is false)`;
}

/** Each query on the three stores in alternating rounds; the many-tenant store's ratios to the other two. */
async function readsOn(dialect: string, stores: Stores, setup: ReadsSetup): Promise<{ lines: string[]; failed: number }> {
  const lines = [...TABLE_HEAD];
  const ratios = ['| query | many / one tenant req/s | many / one p50 | many / 100-plant store req/s | many / 100-plant p50 |', '|---|---:|---:|---:|---:|'];
  const copy = (name: string, url: string) => (url.startsWith('file:') ? freshStore(name, url.slice('file:'.length)) : url);
  let failed = 0;
  for (const query of Object.keys(QUERIES) as Query[]) {
    const target = (name: keyof Omit<Stores, 'drop'>) => (): Promise<Figures> =>
      measure('service', copy(`tenants-${name}`, stores[name]), { env: setup.env, requests: readsIn(query, setup, name === 'many') });
    const { medians, runs } = await alternate({ many: target('many'), one: target('one'), small: target('small') });
    lines.push(
      row(`${dialect}, ${query}, 1 of ${TENANTS.toLocaleString('en')} tenants × 100`, medians.many),
      row(`${dialect}, ${query}, one tenant of ${STORED.toLocaleString('en')}`, medians.one),
      row(`${dialect}, ${query}, 100 plants`, medians.small),
    );
    ratios.push(`| ${dialect}, ${query} | ${f2(medians.many.rps / medians.one.rps)} | ${f2(medians.many.p50 / medians.one.p50)} | ${f2(medians.many.rps / medians.small.rps)} | ${f2(medians.many.p50 / medians.small.p50)} |`);
    failed += failures(...runs.many, ...runs.one, ...runs.small);
  }
  return { lines: [...lines, '', ...ratios], failed };
}

/** R2 on SQLite, then on PostgreSQL unless BENCH_TENANTS_STORES=sqlite or its server cannot be reached. */
export async function manyTenants(setup: ReadsSetup): Promise<{ lines: string[]; failed: number }> {
  const sqlite = await readsOn('SQLite', await sqliteStores(setup), setup);
  if (process.env.BENCH_TENANTS_STORES === 'sqlite') return sqlite;
  const refused = refusal('postgres');
  if (refused !== undefined) return { lines: [...sqlite.lines, '', `R2 on PostgreSQL: skipped; ${refused}`], failed: sqlite.failed };
  let stores: Stores;
  try {
    stores = await postgresStores();
  } catch (error) {
    return { lines: [...sqlite.lines, '', `R2 on PostgreSQL: skipped; ${(error as Error).message}`], failed: sqlite.failed };
  }
  try {
    const postgres = await readsOn('PostgreSQL', stores, setup);
    return { lines: [...sqlite.lines, '', ...postgres.lines], failed: sqlite.failed + postgres.failed };
  } finally {
    await stores.drop();
  }
}
