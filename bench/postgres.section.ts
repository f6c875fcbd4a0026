// The PostgreSQL store next to the SQLite one in the same run: creates (and reads by id, when the service has
// GET /plants/{id}) against a fresh database on the local PostgreSQL server (BENCH_DATABASE_URL), which shares
// this machine. Also measured: rows per PostgreSQL transaction (the group commit) and PostgreSQL's own CPU.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type autocannon from 'autocannon';
import pg from 'pg';
import { storeOfPlants } from './create.section';
import { patchRequests, SEEDED } from './feed.section';
import {
  alternate,
  baselineRuntime,
  CONNECTIONS,
  CURRENT,
  f0,
  f1,
  f2,
  failures,
  freshStore,
  measureRunning,
  median,
  ROUNDS,
  row,
  SECONDS,
  start,
  STORED,
  TABLE_HEAD,
  TOKEN,
  WARMUP_SECONDS,
  type Figures,
  type Runtime,
  type SectionResult,
  throughputRatio,
} from './lib';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

export type PgDatabase = { url: string; drop: () => Promise<void> };

export async function admin<T>(action: (client: pg.Client) => Promise<T>, url: string = SERVER): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

export async function freshDatabase(): Promise<PgDatabase> {
  const name = `plants_bench_${randomBytes(5).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined) };
}

const databaseName = (url: string) => new URL(url).pathname.slice(1);

/** CPU ticks of the PostgreSQL backends serving one database (the service's pool), read from /proc. */
export async function backendTicks(url: string): Promise<number> {
  const { rows } = await admin((client) => client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [databaseName(url)]));
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // a backend that ended in between
    }
  }
  return ticks;
}

const commits = (url: string) =>
  admin(async (client) => {
    // Statistics reach the shared view when a backend is idle for a moment; give them that moment.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const { rows } = await client.query<{ xact_commit: string }>('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [databaseName(url)]);
    return Number(rows[0]?.xact_commit ?? 0);
  });

const rowCount = (url: string) =>
  admin(async (client) => Number((await client.query<{ count: string }>('SELECT count(*) FROM plants')).rows[0]?.count ?? 0), url);

type PgFigures = Figures & { rowsPerCommit: number; pgCpuPerRequestUs: number };

async function measurePostgres(requests?: autocannon.Request[], seed?: number, runtime: Runtime = CURRENT): Promise<PgFigures> {
  const database = await freshDatabase();
  try {
    const server = await start('service', database.url, {}, runtime);
    try {
      if (seed !== undefined) {
        await admin(
          (client) => client.query(`INSERT INTO plants (id, name, tag) SELECT id, 'Stored plant ' || id, CASE WHEN id % 3 = 0 THEN NULL ELSE 'seeded' END FROM generate_series(1, $1::bigint) AS id`, [seed]),
          database.url,
        );
        await admin((client) => client.query('VACUUM ANALYZE plants'), database.url);
      }
      // Over warm-up and measured load together, per row created (reads create none and report 0).
      const rowsBefore = await rowCount(database.url);
      const commitsBefore = await commits(database.url);
      const ticksBefore = await backendTicks(database.url);
      const figures = await measureRunning(server, { requests });
      const ticks = (await backendTicks(database.url)) - ticksBefore;
      const committed = (await commits(database.url)) - commitsBefore;
      const created = (await rowCount(database.url)) - rowsBefore;
      return {
        ...figures,
        rowsPerCommit: committed === 0 ? 0 : created / committed,
        pgCpuPerRequestUs: created === 0 ? 0 : ((ticks / TICKS_PER_SECOND) * 1e6) / created,
      };
    } finally {
      await server.stop();
    }
  } finally {
    await database.drop();
  }
}

async function measureSqlite(requests: autocannon.Request[] | undefined, url: string): Promise<Figures> {
  const server = await start('service', url);
  try {
    return await measureRunning(server, { requests });
  } finally {
    await server.stop();
  }
}

/** GET /plants/{id} of a seeded id, when the service has that route (it arrives with the read branch). */
const readRequests = (count: number): autocannon.Request[] => [
  {
    method: 'GET',
    path: '/plants/1',
    headers: { authorization: `Bearer ${TOKEN}` },
    setupRequest: (request) => ({ ...request, path: `/plants/${1 + Math.floor(Math.random() * count)}` }),
  },
];

async function serviceReadsById(): Promise<boolean> {
  const server = await start('service', freshStore('read-probe'));
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/plants/1`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return response.status === 200 || (response.status === 404 && ((await response.json()) as { error?: number }).error !== 40401);
  } finally {
    await server.stop();
  }
}

export async function postgresSection(): Promise<SectionResult> {
  const { medians, runs } = await alternate({
    sqlite: () => measureSqlite(undefined, freshStore('pg-section-sqlite')),
    postgres: () => measurePostgres(),
  });
  const { sqlite } = medians;
  const postgres = medians.postgres as PgFigures;
  const pgRuns = runs.postgres as PgFigures[];
  const rowsPerCommit = pgRuns.map((run) => run.rowsPerCommit).sort((a, b) => a - b)[Math.floor(pgRuns.length / 2)] ?? 0;
  const pgCpu = pgRuns.map((run) => run.pgCpuPerRequestUs).sort((a, b) => a - b)[Math.floor(pgRuns.length / 2)] ?? 0;
  console.error(`postgres: ${f0(postgres.rps)} creates/s (${f2(postgres.rps / sqlite.rps)} of SQLite), ${f1(rowsPerCommit)} rows per commit`);

  const lines = [
    `### PostgreSQL store: creates, ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
    '',
    'PostgreSQL runs on the same machine, unpinned; the service on core 0 as in the create section.',
    '',
    ...TABLE_HEAD,
    row('service on SQLite (creates)', sqlite),
    row('service on PostgreSQL (creates)', postgres),
  ];
  let failed = failures(...runs.sqlite, ...runs.postgres);
  const ratios = [`| PostgreSQL / SQLite creates per second | ${throughputRatio(runs.postgres, runs.sqlite)} | ≥ 0.6 |`];

  if (await serviceReadsById()) {
    const template = await storeOfPlants();
    const reads = await alternate({
      sqlite: () => measureSqlite(readRequests(STORED), freshStore('pg-section-reads', template)),
      postgres: () => measurePostgres(readRequests(STORED), STORED),
    });
    lines.push(row(`service on SQLite (reads by id, ${STORED.toLocaleString('en')} plants)`, reads.medians.sqlite));
    lines.push(row(`service on PostgreSQL (reads by id, ${STORED.toLocaleString('en')} plants)`, reads.medians.postgres));
    ratios.push(`| PostgreSQL / SQLite reads by id per second | ${throughputRatio(reads.runs.postgres, reads.runs.sqlite)} | ≥ 0.7 |`);
    failed += failures(...reads.runs.sqlite, ...reads.runs.postgres);
  } else {
    ratios.push('| PostgreSQL / SQLite reads by id per second | n/a: this build has no GET /plants/{id} | ≥ 0.7 |');
  }
  lines.push(
    '',
    '| ratio | value | goal |',
    '|---|---:|---|',
    ...ratios,
    `| creates per PostgreSQL transaction (group commit) | ${f1(rowsPerCommit)} | > 1 |`,
    `| PostgreSQL backends' CPU per create | ${f0(pgCpu)} µs | |`,
    '',
  );
  return { lines, failed };
}

/**
 * BENCH_ONLY=postgres-writes with BENCH_BASELINE (another checkout, built; BENCH_BASELINE_NODE its node): creates
 * and edits on PostgreSQL, this build against the baseline's, and this build against itself (the A/A: the spread
 * one run cannot tell from noise), in alternating rounds, each on a fresh database.
 */
export async function postgresWritesSection(): Promise<SectionResult> {
  const baseline = baselineRuntime();
  if (baseline === undefined) return { lines: ['### PostgreSQL writes: skipped, BENCH_BASELINE names no checkout to compare with', ''], failed: 0 };
  const lines = [
    `### PostgreSQL writes: this build against ${baseline.root} (${baseline.label}), ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
    '',
    ...TABLE_HEAD,
  ];
  const ratios = ['| ratio | value |', '|---|---:|'];
  let failed = 0;
  for (const [load, requests, seed] of [
    ['creates', undefined, undefined],
    [`edits (PATCH, a rename of one of ${SEEDED.toLocaleString('en')} plants)`, patchRequests, SEEDED],
  ] as const) {
    const { medians, runs } = await alternate({
      current: () => measurePostgres(requests, seed),
      baseline: () => measurePostgres(requests, seed, baseline),
      again: () => measurePostgres(requests, seed),
    });
    lines.push(row(`this build, ${load}`, medians.current), row(`baseline, ${load}`, medians.baseline), row(`this build again, ${load}`, medians.again));
    ratios.push(`| ${load}: this build / baseline | ${throughputRatio(runs.current, runs.baseline)} |`);
    ratios.push(`| ${load}: this build again / this build (A/A) | ${throughputRatio(runs.again, runs.current)} |`);
    if (seed === undefined) {
      const pgCpu = (figures: Figures[]) => f0(median((figures as PgFigures[]).map((run) => run.pgCpuPerRequestUs)));
      ratios.push(`| ${load}: PostgreSQL backends' CPU per create, this build / baseline / again | ${pgCpu(runs.current)} / ${pgCpu(runs.baseline)} / ${pgCpu(runs.again)} µs |`);
    }
    failed += failures(...runs.current, ...runs.baseline, ...runs.again);
  }
  return { lines: [...lines, '', ...ratios, ''], failed };
}
