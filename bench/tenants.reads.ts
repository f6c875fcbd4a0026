// R2 of the tenants section (bench/tenants.section.ts): reads in one of STORED / 100 tenants of 100 plants against
// a one-tenant store of STORED and a store of 100, on SQLite and on PostgreSQL (BENCH_DATABASE_URL): first page,
// sort=name, q and an exact count, throughput and p50 in alternating rounds. The stores are written by SQL into
// the schema the service made, names as bench/create.section.ts writes them (`Stored plant <id>`).
import type autocannon from 'autocannon';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { countInstructions } from './instructions.section';
import { alternate, CURRENT, f0, f2, failures, freshStore, measure, row, start, STORED, TABLE_HEAD, type Figures } from './lib';
import { admin, freshDatabase } from './postgres.section';

export const PLANTS_PER_TENANT = 100;
export const TENANTS = Math.max(1, Math.floor(STORED / PLANTS_PER_TENANT));

/** How R2 acts: the service's environment with tenants on and the admin token. */
export type ReadsSetup = { env: Record<string, string>; token: string };

const QUERIES = { 'first page': '/plants', 'sort=name': '/plants?sort=name', q: '/plants?q=plant%2077', count: '/plants?limit=1' } as const;
type Query = keyof typeof QUERIES;
type Stores = { many: string; one: string; small: string; drop: () => Promise<void> };

/**
 * GETs of one query by the admin token, each acting in a random one of 1,000 tenants spread over TENANTS, or in
 * `t0`, the one tenant of the other stores. One admin token: static tokens are compared in turn, so 10,000 token lines would measure
 * the token set (per-user tenants come from JWTs).
 */
function readsIn(query: Query, setup: ReadsSetup, many: boolean): autocannon.Request[] {
  const headers: Record<string, string> = { authorization: `Bearer ${setup.token}`, ...(query === 'count' ? { prefer: 'count=exact' } : {}) };
  const step = Math.max(1, Math.floor(TENANTS / 1000));
  const names = many ? Array.from({ length: Math.min(1000, TENANTS) }, (_, index) => `t${index * step}`) : ['t0'];
  const pick = () => names[Math.floor(Math.random() * names.length)] as string;
  return [{ method: 'GET', path: QUERIES[query], headers, setupRequest: (request) => ({ ...request, headers: { ...headers, 'act-as-tenant': pick() } }) }];
}

/**
 * How a store's plants are laid out: `many` = tenants `t0`… of 100 plants (ids 1–100 each), `single` = every plant
 * in tenant `t0`. Every store is read in named tenants, so the rows differ in index depth and nothing else (no row
 * reads the default tenant, whose cursors carry no tenant tag).
 */
type Layout = 'many' | 'single';
const tenantOf = (layout: Layout, index: number) => (layout === 'many' ? `t${Math.floor(index / PLANTS_PER_TENANT)}` : 't0');
const idOf = (layout: Layout, index: number) => (layout === 'many' ? (index % PLANTS_PER_TENANT) + 1 : index + 1);

/** A SQLite store of `count` plants in `layout`, written by SQL into the schema the service made. */
async function sqliteStore(count: number, layout: Layout): Promise<string> {
  const url = freshStore(`tenants-${layout}-${count}`);
  const server = await start('service', url);
  await server.stop();
  const db = new Database(url.slice('file:'.length));
  const insert = db.prepare('INSERT INTO plants (tenant, id, name, tag) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (let index = 0; index < count; index += 1) {
      const id = idOf(layout, index);
      insert.run(tenantOf(layout, index), id, `Stored plant ${id}`, id % 3 === 0 ? null : 'seeded');
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

const templates = new Map<string, string>();

/**
 * The SQLite template of `count` plants in `layout` with its search keys filled (the file's path), built once per
 * run: R1, R2 and R2i read copies of the same stores.
 */
async function templateOf(count: number, layout: Layout, env: Record<string, string>): Promise<string> {
  const name = `tenants-${layout}-${count}-keyed`;
  const made = templates.get(name);
  if (made !== undefined) return made;
  const file = (await keyed(name, await sqliteStore(count, layout), env)).slice('file:'.length);
  templates.set(name, file);
  return file;
}

/** A SQLite template of STORED plants all in tenant `t0`, search keys filled: R1 counts a named tenant's requests on it. */
export const storeInTenantT0 = (env: Record<string, string>): Promise<string> => templateOf(STORED, 'single', env);

async function sqliteStores(setup: ReadsSetup): Promise<Stores> {
  const url = async (count: number, layout: Layout) => `file:${await templateOf(count, layout, setup.env)}`;
  return { many: await url(STORED, 'many'), one: await url(STORED, 'single'), small: await url(PLANTS_PER_TENANT, 'single'), drop: () => Promise.resolve() };
}

/** A PostgreSQL database the service migrated, with `count` plants in `layout`. */
async function postgresStore(count: number, layout: Layout): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = await freshDatabase();
  const server = await start('service', database.url);
  await server.stop();
  const id = layout === 'many' ? `(g - 1) % ${PLANTS_PER_TENANT} + 1` : 'g';
  const tenant = layout === 'many' ? `'t' || ((g - 1) / ${PLANTS_PER_TENANT})` : "'t0'";
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
  const [many, one, small] = [await postgresStore(STORED, 'many'), await postgresStore(STORED, 'single'), await postgresStore(PLANTS_PER_TENANT, 'single')];
  return { many: many.url, one: one.url, small: small.url, drop: async () => void (await Promise.all([many.drop(), one.drop(), small.drop()])) };
}

/**
 * Each query on the three stores in alternating rounds, the 100-plant store twice (its A/A: how far apart the same
 * store lands); the many-tenant store's ratios to the other two.
 */
async function readsOn(dialect: string, stores: Stores, setup: ReadsSetup): Promise<{ lines: string[]; failed: number }> {
  const lines = [...TABLE_HEAD];
  const ratios = [
    '| query | many / one tenant req/s | many / one p50 | many / 100-plant store req/s | many / 100-plant p50 | A/A 100-plant again / 100-plant req/s | A/A p50 |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const copy = (name: string, url: string) => (url.startsWith('file:') ? freshStore(name, url.slice('file:'.length)) : url);
  let failed = 0;
  for (const query of Object.keys(QUERIES) as Query[]) {
    const target = (name: keyof Omit<Stores, 'drop'>, as: string = name) => (): Promise<Figures> =>
      measure('service', copy(`tenants-${as}`, stores[name]), { env: setup.env, requests: readsIn(query, setup, name === 'many') });
    const { medians: m, runs } = await alternate({ many: target('many'), one: target('one'), small: target('small'), again: target('small', 'again') });
    lines.push(
      row(`${dialect}, ${query}, 1 of ${TENANTS.toLocaleString('en')} tenants × 100`, m.many),
      row(`${dialect}, ${query}, one tenant of ${STORED.toLocaleString('en')}`, m.one),
      row(`${dialect}, ${query}, 100 plants`, m.small),
      row(`${dialect}, ${query}, 100 plants again`, m.again),
    );
    const ratio = (a: Figures, b: Figures) => `${f2(a.rps / b.rps)} | ${f2(a.p50 / b.p50)}`;
    ratios.push(`| ${dialect}, ${query} | ${ratio(m.many, m.one)} | ${ratio(m.many, m.small)} | ${ratio(m.again, m.small)} |`);
    failed += failures(...runs.many, ...runs.one, ...runs.small, ...runs.again);
  }
  return { lines: [...lines, '', ...ratios], failed };
}

/** R2 on SQLite, then on PostgreSQL (BENCH_DATABASE_URL) unless its server cannot be reached; BENCH_TENANTS_STORES=sqlite or postgres runs one. */
export async function manyTenants(setup: ReadsSetup): Promise<{ lines: string[]; failed: number }> {
  const only = process.env.BENCH_TENANTS_STORES;
  const sqlite = only === 'postgres' ? { lines: [], failed: 0 } : await readsOn('SQLite', await sqliteStores(setup), setup);
  if (only === 'sqlite') return sqlite;
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

/**
 * R2 on SQLite by instructions (BENCH_TENANTS_PARTS=r2i): the service with SQLite inside it under callgrind, a
 * tenant of 100 among TENANTS against the 100-plant store, that one counted twice (the A/A), three at once.
 */
export async function manyTenantsCounted(setup: ReadsSetup): Promise<{ lines: string[]; failed: number }> {
  const many = await templateOf(STORED, 'many', setup.env);
  const small = await templateOf(PLANTS_PER_TENANT, 'single', setup.env);
  const lines = ['| query | many instr/req | 100 plants instr/req | 100 plants again | 100-plant / many | A/A (again / 100-plant) |', '|---|---:|---:|---:|---:|---:|'];
  let failed = 0;
  for (const query of ['first page', 'sort=name', 'q'] as Query[]) {
    const workload = (store: string, inMany: boolean) => ({ name: `r2 ${query}`, store, requests: () => readsIn(query, setup, inMany) });
    const [inMany, inSmall, again] = await Promise.all([
      countInstructions('many', CURRENT, workload(many, true), undefined, undefined, setup.env),
      countInstructions('small', CURRENT, workload(small, false), undefined, undefined, setup.env),
      countInstructions('small-again', { ...CURRENT, label: `${CURRENT.label} again` }, workload(small, false), undefined, undefined, setup.env),
    ]);
    const [a, b, c] = [inMany, inSmall, again].map((count) => count.instructionsPerRequest) as [number, number, number];
    lines.push(`| ${query} | ${f0(a)} | ${f0(b)} | ${f0(c)} | ${(b / a).toFixed(3)} | ${(c / b).toFixed(3)} |`);
    failed += inMany.failed + inSmall.failed + again.failed;
  }
  return { lines, failed };
}
