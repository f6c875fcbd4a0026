// POST /plants: the service as in production (durable store, request logs on) against ceiling C, a store of
// STORED plants and its time to ready, and overload at 1,000 connections.
import Database from 'better-sqlite3';
import {
  alternate,
  CONNECTIONS,
  f0,
  f1,
  f2,
  failures,
  met,
  freshStore,
  measure,
  median,
  ROUNDS,
  row,
  SECONDS,
  start,
  STORED,
  TABLE_HEAD,
  WARMUP_SECONDS,
  type Figures,
  type SectionResult,
  throughputRatio,
} from './lib';

const templates = new Map<number, string>();

// Ceiling F: ceiling C plus the service's own durable group-committed insert, no logs (bench/ceiling-durable-server.ts).
const CEILING_F = { script: 'ceiling-durable-server.js', label: 'ceiling F' };
// Ceiling F+log: F plus the service's request log line, the one feature F lacks that the service must have.
const CEILING_F_LOG = { script: 'ceiling-durable-server.js', label: 'ceiling F+log' };
const WITH_LOG = { env: { CEILING_LOG: '1' } };

/** The ratio of two targets' CPU per request (medians), with each round's own. */
const cpuRatio = (runs: Figures[], against: Figures[]): string => {
  const ratio = median(runs.map((run) => run.cpuPerRequestUs)) / median(against.map((run) => run.cpuPerRequestUs));
  return `${f2(ratio)} (rounds ${runs.map((run, index) => f2(run.cpuPerRequestUs / (against[index]?.cpuPerRequestUs ?? Number.NaN))).join(', ')})`;
};

/** A SQLite store of `count` plants (ids 1..count), made once per run and count, and copied by each section that needs it. */
export async function storeOfPlants(count: number = STORED): Promise<string> {
  const made = templates.get(count);
  if (made !== undefined) return made;
  const url = freshStore(`template-${count}`);
  // The service creates and migrates the file itself, so the schema is exactly its own.
  const server = await start('service', url);
  await server.stop();
  const file = url.slice('file:'.length);
  const db = new Database(file);
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let id = 1; id <= count; id += 1) insert.run(id, `Stored plant ${id}`, id % 3 === 0 ? null : 'seeded');
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  // Started once more, the service fills the search keys of the plants written by SQL: every copy then starts as a
  // running store does, not spending its start (under callgrind, past the ready timeout) on a million keys.
  await (await start('service', url)).stop();
  templates.set(count, file);
  return file;
}

export async function createSection(): Promise<SectionResult> {
  // The service twice (A/A): how far apart the same build lands with this method, printed beside the goals.
  const { medians, runs } = await alternate({
    service: () => measure('service', freshStore('service')),
    logged: () => measure(CEILING_F_LOG, freshStore('ceiling-f-log'), WITH_LOG),
    durable: () => measure(CEILING_F, freshStore('ceiling-f')),
    ceiling: () => measure('ceiling', freshStore('ceiling')),
    again: () => measure('service', freshStore('service-again')),
  });
  const { service, ceiling, durable, logged, again } = medians;
  const goals = [
    `### Creates (POST /plants): ${CONNECTIONS} connections, unique ids, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
    '',
    ...TABLE_HEAD,
    row('service (durable, group commit, request logs)', service),
    row('service again (A/A: the same build, alternating with the rest)', again),
    row('ceiling F+log (ceiling F + one pino request line per request, same fields and destination as the service)', logged),
    row('ceiling F (ceiling C + the same group-committed durable insert, no logs)', durable),
    row('ceiling C (Express 5 + helmet + bearer + zod, no storage, no logs)', ceiling),
    '',
    '| ratio | value | goal | met |',
    '|---|---:|---|---|',
    `| A/A: service / service again throughput (what one run can tell) | ${throughputRatio(runs.service, runs.again)} | measured | |`,
    `| service / F+log throughput | ${throughputRatio(runs.service, runs.logged)} | ≥ 0.90 | ${met(service.rps / logged.rps >= 0.9)} |`,
    `| service / F+log p99 | ${f2(service.p99 / logged.p99)} | ≤ 1.5 | ${met(service.p99 / logged.p99 <= 1.5)} |`,
    `| service / F+log CPU per request | ${cpuRatio(runs.service, runs.logged)} (${f0(service.cpuPerRequestUs)} against ${f0(logged.cpuPerRequestUs)} µs) | ≤ 1.11 | ${met(service.cpuPerRequestUs / logged.cpuPerRequestUs <= 1.11)} |`,
    `| F+log / F throughput (what the log line costs) | ${throughputRatio(runs.logged, runs.durable)} | measured | |`,
    `| service / F throughput | ${throughputRatio(runs.service, runs.durable)} | measured | |`,
    `| service / C throughput | ${throughputRatio(runs.service, runs.ceiling)} | measured | |`,
    `| service peak RSS | ${f1(service.peakRssMiB)} MiB | ≤ 150 MiB | ${met(service.peakRssMiB <= 150)} |`,
  ];
  const failed = failures(...runs.service, ...runs.again, ...runs.durable, ...runs.logged);
  // BENCH_QUICK=1: the goal rows only, without the full store and the overload runs.
  if (process.env.BENCH_QUICK) return { lines: [...goals, ''], failed };
  console.error(`building a store of ${STORED} plants…`);
  const full1m = await storeOfPlants();
  const readyTimes: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const server = await start('service', freshStore('ready-check', full1m));
    readyTimes.push(performance.now() - server.startedAt);
    await server.stop();
  }
  const full = await measure('service', freshStore('full-store', full1m));
  console.error(`1M store: ${f0(full.rps)} req/s, ready in ${f0(median(readyTimes))} ms`);

  const overload = await measure('service', freshStore('overload-1000'), { connections: 1000 });
  const ceilingOverload = await measure('ceiling', freshStore('ceiling-overload'), { connections: 1000 });
  const rate = Math.round(service.rps * 2);
  const overloadRate = await measure('service', freshStore('overload-rate'), { connections: 1000, overallRate: rate });
  console.error(`overload: 1000 connections ${f0(overload.rps)} req/s; at ${rate} req/s offered ${f0(overloadRate.rps)} req/s`);

  const overloadRow = (name: string, x: Figures, serverView = true) =>
    `| ${name} | ${f0(x.rps)} | ${f1(x.p50)} | ${f1(x.p99)} | ${f1((100 * x.shed) / Math.max(1, x.total))}% | ${x.non2xx - x.shed} | ${x.errors} | ${serverView ? `${x.serverAborted} / ${x.serverFaults} / ${f1(x.serverP99)}` : 'n/a'} | ${f1(x.peakRssMiB)} |`;
  const lines = [
    ...goals,
    `| full / empty store throughput | ${f2(full.rps / service.rps)} | ≥ 0.90 | ${met(full.rps / service.rps >= 0.9)} |`,
    `| start to /readyz 200 with ${STORED.toLocaleString('en')} plants | ${f0(median(readyTimes))} ms | < 1000 ms | ${met(median(readyTimes) < 1000)} |`,
    '',
    '| overload | answered req/s | p50 ms | p99 ms | shed (503) | other non-2xx | client timeouts/resets | server log: aborted / 5xx not 503 / p99 ms | peak RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    overloadRow('service, 1,000 connections', overload),
    overloadRow(`service, 1,000 connections, ${rate} req/s offered (2x its throughput)`, overloadRate),
    overloadRow('ceiling C, 1,000 connections (reference for the load generator)', ceilingOverload, false),
    '',
  ];
  return { lines, failed: failed + failures(full) };
}

