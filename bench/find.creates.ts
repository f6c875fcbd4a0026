// Creates with the search index against without it, on copies of the find section's upgraded store. "Without" is
// the same build on a copy where the objects the search index migration creates (its indexes, triggers and
// virtual tables) are dropped, so the two differ by the index's upkeep alone. SQLite: instruction counts under
// callgrind (the index is maintained inside the service's process), with the same build counted twice for the
// A/A. PostgreSQL: the index is maintained by PostgreSQL's backends, which callgrind on the service does not see,
// so creates per second and the backends' CPU per create, in alternating rounds, with a second copy for the A/A.
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type autocannon from 'autocannon';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { countInstructions, type Workload } from './instructions.section';
import { admin, backendTicks } from './postgres.section';
import { CURRENT, cpuTicks, type Runtime, f0, f2, load, median, newId, ROOT, start, STORED, TICKS_PER_SECOND, TOKEN, work } from './lib';
import { nameOf } from './find.seed';
import { FIND_SECONDS } from './find.reads';

/**
 * The migration whose objects "without" drops: BENCH_FIND_INDEX_MIGRATION (a name's start), else the newest whose
 * name says search, trigram or full-text, else (no search index yet) the newest after the times and search keys.
 */
export function searchIndexMigration(dialect: 'sqlite' | 'postgres'): { name: string; sql: string } | undefined {
  const dir = path.join(ROOT, 'migrations', dialect);
  const names = readdirSync(dir).filter((name) => /^\d+-[\w-]+\.sql$/.test(name)).sort();
  const after = names.slice(names.findIndex((name) => name.includes('times-and-keys')) + 1);
  const named = process.env.BENCH_FIND_INDEX_MIGRATION;
  const name = named !== undefined ? names.find((file) => file.startsWith(named)) : (after.filter((file) => /search|trgm|trigram|fts/.test(file)).at(-1) ?? after.at(-1));
  return name === undefined ? undefined : { name, sql: readFileSync(path.join(dir, name), 'utf8') };
}

/**
 * DROP statements for what `sql` creates: triggers first (PostgreSQL names their table), then virtual tables,
 * then indexes.
 */
export function dropsOf(sql: string, dialect: 'sqlite' | 'postgres'): string[] {
  const code = sql.replace(/--.*$/gm, '');
  const all = (pattern: RegExp) => [...code.matchAll(pattern)].map((match) => match.slice(1));
  return [
    ...all(/CREATE\s+(?:OR\s+REPLACE\s+)?TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)[\s\S]*?\bON\s+([\w.]+)/gi).map(([name, table]) =>
      dialect === 'postgres' ? `DROP TRIGGER IF EXISTS ${name} ON ${table}` : `DROP TRIGGER IF EXISTS ${name}`,
    ),
    ...all(/CREATE\s+VIRTUAL\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)/gi).map(([name]) => `DROP TABLE IF EXISTS ${name}`),
    ...all(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)/gi).map(([name]) => `DROP INDEX IF EXISTS ${name}`),
  ];
}

/**
 * The earlier migrations' CREATE INDEX statements for the indexes `sql` drops (and may create again, wider): on
 * "without" they come back as they were, so the two stores differ by the migration alone.
 */
export function restoresOf(sql: string, dialect: 'sqlite' | 'postgres', name: string): string[] {
  const dir = path.join(ROOT, 'migrations', dialect);
  const earlier = readdirSync(dir).filter((file) => /^\d+-[\w-]+\.sql$/.test(file) && file < name).sort();
  const code = (text: string) => text.replace(/--.*$/gm, '');
  const creates = earlier.flatMap((file) => [...code(readFileSync(path.join(dir, file), 'utf8')).matchAll(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)[^;]*;/gi)]);
  const dropped = [...code(sql).matchAll(/DROP\s+INDEX\s+(?:IF\s+EXISTS\s+)?([\w.]+)/gi)].map((match) => match[1]);
  return dropped.flatMap((index) => creates.filter((create) => create[1] === index).slice(-1).map((create) => create[0]));
}

/** Creates with new ids and names as the seeded ones, tagged as a person would. */
export const createsLikeStored = (): autocannon.Request[] => [
  {
    method: 'POST',
    path: '/plants',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    setupRequest: (request) => {
      const id = newId();
      return { ...request, body: JSON.stringify({ id, name: nameOf(1 + (id % STORED)), tag: 'kitchen' }) };
    },
  },
];

// Half the instructions section's counts: on a loaded machine three servers under valgrind take minutes.
const WARMUP_CREATES = 500;
const COUNTED_CREATES = 1_000;

export type CreateRows = { rows: string[]; failed: number };
const f3 = (n: number) => n.toFixed(3);
const thousands = (n: number) => Math.round(n).toLocaleString('en');

/** SQLite: the upgraded store copied twice, the index's objects dropped from one; three counts at once. */
/**
 * BENCH_FIND_WITHOUT: a built checkout of the commit before the search index. SQLite's index is written by the
 * service's own indexer, whose statements need its tables: a store without them does not start. "Without" is then
 * that build on the same store (its migrations ignore the newer tables).
 */
function withoutRuntime(): Runtime | undefined {
  const root = process.env.BENCH_FIND_WITHOUT;
  return root === undefined || root === '' ? undefined : { ...CURRENT, label: 'without the search index', root: path.resolve(root) };
}

/** SQLite: the index's objects dropped from a copy of the upgraded store, or the build before the index (BENCH_FIND_WITHOUT). */
export async function sqliteCreates(template: string): Promise<CreateRows> {
  const migration = searchIndexMigration('sqlite');
  if (migration === undefined) return { rows: ['| SQLite creates with / without the search index, instructions | n/a: this build has no search index migration | | ≥ 0.95 | not measured |'], failed: 0 };
  const before = withoutRuntime();
  const byIndexer = /VIRTUAL TABLE/i.test(migration.sql);
  if (byIndexer && before === undefined) {
    const row = `| SQLite creates: without / with the search index (${migration.name}), instructions per create | n/a: set BENCH_FIND_WITHOUT to a built checkout of the commit before it | | ≥ 0.95 | not measured |`;
    return { rows: [row], failed: 0 };
  }
  let without = template;
  if (!byIndexer) {
    without = path.join(work, 'find-without-index.db');
    copyFileSync(template, without);
    const db = new Database(without);
    const drops = [...dropsOf(migration.sql, 'sqlite'), ...restoresOf(migration.sql, 'sqlite', migration.name)];
    for (const drop of drops) db.exec(drop);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    console.error(`find creates: without ${migration.name}: ${drops.join('; ')}`);
  }
  const withoutBuild = byIndexer && before !== undefined ? before : CURRENT;
  const workload = (store: string): Workload => ({ name: 'find create', store, requests: createsLikeStored });
  const [withIndex, withoutIndex, again] = await Promise.all([
    countInstructions('with-index', CURRENT, workload(template), WARMUP_CREATES, COUNTED_CREATES),
    countInstructions('without-index', withoutBuild, workload(without), WARMUP_CREATES, COUNTED_CREATES),
    countInstructions('with-index-again', CURRENT, workload(template), WARMUP_CREATES, COUNTED_CREATES),
  ]);
  const ratio = withoutIndex.instructionsPerRequest / withIndex.instructionsPerRequest;
  return {
    rows: [
      `| SQLite creates: without / with the search index (${migration.name}${withoutBuild === CURRENT ? '' : `; without: the build at ${withoutBuild.root}`}), instructions per create | ${f3(ratio)} (${thousands(withoutIndex.instructionsPerRequest)} / ${thousands(withIndex.instructionsPerRequest)}) | again / with ${f3(again.instructionsPerRequest / withIndex.instructionsPerRequest)} | ≥ 0.95 | ${ratio >= 0.95 ? 'yes' : 'no'} |`,
    ],
    failed: withIndex.failed + withoutIndex.failed + again.failed,
  };
}

type PgCreate = { rps: number; serverCpuUs: number; pgCpuUs: number; failed: number };

async function pgCreateRound(url: string): Promise<PgCreate> {
  const server = await start('service', url);
  try {
    await load(server.port, 1, { requests: createsLikeStored() });
    const ticks = await backendTicks(url);
    const own = cpuTicks(server.child.pid ?? 0);
    const result = await load(server.port, FIND_SECONDS, { requests: createsLikeStored() });
    const pgTicks = (await backendTicks(url)) - ticks;
    const ownTicks = cpuTicks(server.child.pid ?? 0) - own;
    const total = Math.max(1, result.requests.total);
    const us = (n: number) => ((n / TICKS_PER_SECOND) * 1e6) / total;
    return { rps: result.requests.total / FIND_SECONDS, serverCpuUs: us(ownTicks), pgCpuUs: us(pgTicks), failed: result.non2xx + result.errors + result.timeouts };
  } finally {
    await server.stop();
  }
}

/** PostgreSQL: three copies of the upgraded database (FILE_COPY), the index's objects dropped from one. */
export async function postgresCreates(url: string, rounds: number): Promise<CreateRows> {
  const migration = searchIndexMigration('postgres');
  if (migration === undefined) return { rows: ['| PostgreSQL creates with / without the search index | n/a: this build has no search index migration | | ≥ 0.95 | not measured |'], failed: 0 };
  const source = new URL(url).pathname.slice(1);
  const copies = { with: `${source}_with`, without: `${source}_without`, again: `${source}_again` };
  const urlOf = (name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();
  for (const copy of Object.values(copies)) await admin((client: pg.Client) => client.query(`CREATE DATABASE ${copy} TEMPLATE ${source} STRATEGY FILE_COPY`));
  try {
    await admin(async (client: pg.Client) => {
      for (const drop of dropsOf(migration.sql, 'postgres')) await client.query(drop);
    }, urlOf(copies.without));
    const runs: Record<keyof typeof copies, PgCreate[]> = { with: [], without: [], again: [] };
    const order = Object.keys(copies) as (keyof typeof copies)[];
    for (let round = 1; round <= rounds; round += 1) {
      for (const name of round % 2 === 1 ? order : [...order].reverse()) {
        const run = await pgCreateRound(urlOf(copies[name]));
        runs[name].push(run);
        console.error(`find creates PostgreSQL round ${round} ${name}: ${f0(run.rps)} creates/s, service ${f0(run.serverCpuUs)} µs, PostgreSQL ${f0(run.pgCpuUs)} µs CPU per create, failed ${run.failed}`);
      }
    }
    const m = (name: keyof typeof copies, key: keyof PgCreate) => median(runs[name].map((run) => run[key]));
    const rpsRatio = m('with', 'rps') / m('without', 'rps');
    const cpu = (name: keyof typeof copies) => m(name, 'serverCpuUs') + m(name, 'pgCpuUs');
    const cpuRatio = cpu('without') / cpu('with');
    return {
      rows: [
        `| PostgreSQL creates: with / without the search index (${migration.name}), creates per second | ${f2(rpsRatio)} (${f0(m('with', 'rps'))} / ${f0(m('without', 'rps'))}) | again / with ${f2(m('again', 'rps') / m('with', 'rps'))} | ≥ 0.95 | ${rpsRatio >= 0.95 ? 'yes' : 'no'} |`,
        `| PostgreSQL creates: without / with, CPU per create (service + PostgreSQL backends) | ${f2(cpuRatio)} (${f0(cpu('without'))} / ${f0(cpu('with'))} µs; backends ${f0(m('without', 'pgCpuUs'))} / ${f0(m('with', 'pgCpuUs'))}) | again / with ${f2(cpu('again') / cpu('with'))} | ≥ 0.95 | ${cpuRatio >= 0.95 ? 'yes' : 'no'} |`,
      ],
      failed: Object.values(runs).flat().reduce((sum, run) => sum + run.failed, 0),
    };
  } finally {
    for (const copy of Object.values(copies)) await admin((client: pg.Client) => client.query(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`));
  }
}
