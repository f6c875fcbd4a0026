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

let template: string | undefined;

// Ceiling F: ceiling C plus the service's own durable group-committed insert, no logs (bench/ceiling-durable-server.ts).
const CEILING_F = { script: 'ceiling-durable-server.js', label: 'ceiling F' };

/** A SQLite store of `count` plants (ids 1..count), made once per run and copied by each section that needs it. */
export async function storeOfPlants(count: number = STORED): Promise<string> {
  if (template !== undefined) return template;
  const url = freshStore('template-1m');
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
  template = file;
  return file;
}

export async function createSection(): Promise<SectionResult> {
  const { medians, runs } = await alternate({
    service: () => measure('service', freshStore('service')),
    ceiling: () => measure('ceiling', freshStore('ceiling')),
    durable: () => measure(CEILING_F, freshStore('ceiling-f')),
  });
  const { service, ceiling, durable } = medians;
  if (process.env.BENCH_QUICK) {
    // A quick comparison while working on the hot path; the goals are judged on the full run only.
    console.error(`quick: service/F ${f2(service.rps / durable.rps)}, p99 ${service.p99} vs ${durable.p99} ms; service/C ${f2(service.rps / ceiling.rps)}, CPU ${f0(service.cpuPerRequestUs)} vs ${f0(ceiling.cpuPerRequestUs)} µs/req, p99 ${service.p99} vs ${ceiling.p99} ms, RSS ${f1(service.peakRssMiB)} MiB`);
    return { lines: [], failed: failures(...runs.service) };
  }
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
    `### Creates (POST /plants): ${CONNECTIONS} connections, unique ids, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
    '',
    ...TABLE_HEAD,
    row('service (durable, group commit, request logs)', service),
    row('ceiling C (Express 5 + helmet + bearer + zod, no storage, no logs)', ceiling),
    row('ceiling F (ceiling C + the same group-committed durable insert, no logs)', durable),
    row(`service, store holding ${STORED.toLocaleString('en')} plants`, full),
    '',
    '| ratio | value | goal |',
    '|---|---:|---|',
    `| service / C throughput | ${throughputRatio(runs.service, runs.ceiling)} | ≥ 0.90 |`,
    `| service / C p99 | ${f2(service.p99 / ceiling.p99)} | ≤ 1.5 |`,
    `| service / F throughput | ${throughputRatio(runs.service, runs.durable)} | ≥ 0.90 |`,
    `| service / F p99 | ${f2(service.p99 / durable.p99)} | ≤ 1.5 |`,
    `| service CPU per request | ${f0(service.cpuPerRequestUs)} µs | ≤ 160 µs |`,
    `| service peak RSS | ${f1(service.peakRssMiB)} MiB | ≤ 150 MiB |`,
    `| full / empty store throughput | ${f2(full.rps / service.rps)} | ≥ 0.90 |`,
    `| start to /readyz 200 with ${STORED.toLocaleString('en')} plants | ${f0(median(readyTimes))} ms | < 1000 ms |`,
    '',
    '| overload | answered req/s | p50 ms | p99 ms | shed (503) | other non-2xx | client timeouts/resets | server log: aborted / 5xx not 503 / p99 ms | peak RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    overloadRow('service, 1,000 connections', overload),
    overloadRow(`service, 1,000 connections, ${rate} req/s offered (2x its throughput)`, overloadRate),
    overloadRow('ceiling C, 1,000 connections (reference for the load generator)', ceilingOverload, false),
    '',
  ];
  return { lines, failed: failures(...runs.service, ...runs.durable, full) };
}

