// npm run bench: the service as in production (durable store, request logs on) against ceiling C
// (bench/ceiling-server.ts), alternating in one run, on 127.0.0.1 only, with bounded durations.
// Server on core 0, this load generator on core 1 (taskset), so the two do not share a core.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';

const ROOT = path.resolve(__dirname, '..');
const TOKEN = 'bench-token-0123456789abcdefghijklmnopqrstuvwxyz';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const CONNECTIONS = 50;
const STORED = Number(process.env.BENCH_STORED ?? 1_000_000);
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

type Target = 'service' | 'ceiling';
type Figures = {
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequestUs: number;
  peakRssMiB: number;
  non2xx: number;
  errors: number;
  total: number;
  shed: number;
  // From the server's own request log (the service only): requests it saw aborted, and 5xx other than 503.
  serverAborted: number;
  serverFaults: number;
  serverP99: number;
};

let nextId = 10_000_000_000;
const work = mkdtempSync(path.join(os.tmpdir(), 'plants-bench-'));

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

async function waitReady(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('server not ready in time');
}

type Started = { child: ChildProcess; port: number; startedAt: number; logFile: string; stop: () => Promise<void> };
let runCount = 0;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function start(target: Target, databaseFile: string): Promise<Started> {
  const script = target === 'service' ? path.join(ROOT, 'dist', 'server.js') : path.join(ROOT, 'dist-bench', 'ceiling-server.js');
  // The server writes its log straight into a file: piped through this process, the log would load the
  // load generator and push back on the server.
  runCount += 1;
  const logFile = path.join(work, `${target}-${runCount}.log`);
  const log = openSync(logFile, 'a');
  const port = await freePort();
  const startedAt = performance.now();
  const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn('taskset', ['-c', '0', process.execPath, ...nodeFlags, script], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      AUTH_TOKENS: TOKEN,
      DATABASE_URL: `file:${databaseFile}`,
      LOG_LEVEL: 'info',
      // Rate limiting is a per-client brake; one load generator with one token would only measure 429s.
      RATE_LIMIT_PER_MINUTE: '0',
    },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([waitReady(port), exited.then(() => Promise.reject(new Error(`${target} exited before it was ready`)))]);
  return {
    child,
    port,
    startedAt,
    logFile,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

function load(port: number, seconds: number, options: { connections?: number; overallRate?: number } = {}): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: options.connections ?? CONNECTIONS,
        duration: seconds,
        overallRate: options.overallRate,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            path: '/plants',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            setupRequest: (request) => {
              nextId += 1;
              return { ...request, body: `{"id":${nextId},"name":"Monstera ${nextId}","tag":"bench"}` };
            },
          },
        ],
      },
      (error: Error | null, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

async function measure(target: Target, databaseFile: string, options: { connections?: number; overallRate?: number } = {}): Promise<Figures> {
  const server = await start(target, databaseFile);
  await load(server.port, WARMUP_SECONDS, options);
  const pid = server.child.pid ?? 0;
  const before = cpuTicks(pid);
  const result = await load(server.port, SECONDS, options);
  const ticks = cpuTicks(pid) - before;
  const rss = peakRssMiB(pid);
  await server.stop();
  const total = result.requests.total;
  const shed = result.statusCodeStats?.['503']?.count ?? 0;
  const requestLines = readFileSync(server.logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as { status: number; ms: number; aborted?: boolean });
  const serverMs = requestLines.map((line) => line.ms).sort((a, b) => a - b);
  return {
    rps: total / SECONDS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequestUs: total === 0 ? 0 : ((ticks / TICKS_PER_SECOND) * 1e6) / total,
    peakRssMiB: rss,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts + result.resets,
    total,
    shed,
    serverAborted: requestLines.filter((line) => line.aborted).length,
    serverFaults: requestLines.filter((line) => line.status >= 500 && line.status !== 503).length,
    // Time inside the service, from its log; autocannon's latency adds the time a request waited to be sent.
    serverP99: serverMs[Math.floor(serverMs.length * 0.99)] ?? 0,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

function medianFigures(runs: Figures[]): Figures {
  const keys = Object.keys(runs[0] ?? {}) as (keyof Figures)[];
  return Object.fromEntries(keys.map((key) => [key, median(runs.map((run) => run[key]))])) as Figures;
}

function freshStore(name: string, template?: string): string {
  const file = path.join(work, `${name}.db`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  if (template !== undefined) copyFileSync(template, file);
  return file;
}

async function buildStoreOf(count: number): Promise<string> {
  const file = freshStore('template-1m');
  // The service creates and migrates the file itself, so the schema is exactly its own.
  const server = await start('service', file);
  await server.stop();
  const db = new Database(file);
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let id = 1; id <= count; id += 1) insert.run(id, `Stored plant ${id}`, id % 3 === 0 ? null : 'seeded');
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}

const f0 = (n: number) => n.toFixed(0);
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  if (!process.env.BENCH_PINNED) {
    // Re-run this script pinned to core 1; the servers go to core 0.
    const result = spawnSync('taskset', ['-c', '1', process.execPath, __filename], { stdio: 'inherit', env: { ...process.env, BENCH_PINNED: '1' } });
    process.exit(result.status ?? 1);
  }
  mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  const runs: Record<Target, Figures[]> = { service: [], ceiling: [] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    const order: Target[] = round % 2 === 1 ? ['service', 'ceiling'] : ['ceiling', 'service'];
    for (const target of order) {
      const figures = await measure(target, freshStore(`${target}-${round}`));
      runs[target].push(figures);
      console.error(`round ${round} ${target}: ${f0(figures.rps)} req/s, p99 ${figures.p99} ms, ${f0(figures.cpuPerRequestUs)} µs CPU/req, ${f1(figures.peakRssMiB)} MiB, non-2xx ${figures.non2xx}`);
    }
  }
  const service = medianFigures(runs.service);
  const ceiling = medianFigures(runs.ceiling);
  const failedService = runs.service.reduce((sum, run) => sum + run.non2xx + run.errors, 0);

  if (process.env.BENCH_QUICK) {
    // A quick comparison while working on the hot path; the goals are judged on the full run only.
    console.error(`quick: service/C ${f2(service.rps / ceiling.rps)}, CPU ${f0(service.cpuPerRequestUs)} vs ${f0(ceiling.cpuPerRequestUs)} µs/req, p99 ${service.p99} vs ${ceiling.p99} ms, RSS ${f1(service.peakRssMiB)} MiB`);
    return;
  }
  console.error(`building a store of ${STORED} plants…`);
  const template = await buildStoreOf(STORED);
  const readyTimes: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const server = await start('service', freshStore('ready-check', template));
    readyTimes.push(performance.now() - server.startedAt);
    await server.stop();
  }
  const full = await measure('service', freshStore('full-store', template));
  console.error(`1M store: ${f0(full.rps)} req/s, ready in ${f0(median(readyTimes))} ms`);

  const overload = await measure('service', freshStore('overload-1000'), { connections: 1000 });
  const ceilingOverload = await measure('ceiling', freshStore('ceiling-overload'), { connections: 1000 });
  const rate = Math.round(service.rps * 2);
  const overloadRate = await measure('service', freshStore('overload-rate'), { connections: 1000, overallRate: rate });
  console.error(`overload: 1000 connections ${f0(overload.rps)} req/s; at ${rate} req/s offered ${f0(overloadRate.rps)} req/s`);

  const row = (name: string, x: Figures) =>
    `| ${name} | ${f0(x.rps)} | ${f1(x.p50)} | ${f1(x.p99)} | ${f0(x.cpuPerRequestUs)} | ${f1(x.peakRssMiB)} |`;
  const overloadRow = (name: string, x: Figures, serverView = true) =>
    `| ${name} | ${f0(x.rps)} | ${f1(x.p50)} | ${f1(x.p99)} | ${f1((100 * x.shed) / Math.max(1, x.total))}% | ${x.non2xx - x.shed} | ${x.errors} | ${serverView ? `${x.serverAborted} / ${x.serverFaults} / ${f1(x.serverP99)}` : 'n/a'} | ${f1(x.peakRssMiB)} |`;
  const report = [
    `Plant Store bench, ${new Date().toISOString().slice(0, 10)}: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version};`,
    `server on core 0, autocannon on core 1; ${CONNECTIONS} connections, unique ids, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds.`,
    '',
    '| target | req/s | p50 ms | p99 ms | server CPU µs/req | peak RSS MiB |',
    '|---|---:|---:|---:|---:|---:|',
    row('service (durable, group commit, request logs)', service),
    row('ceiling C (Express 5 + helmet + bearer + zod, no storage, no logs)', ceiling),
    row(`service, store holding ${STORED.toLocaleString('en')} plants`, full),
    '',
    '| ratio | value | goal |',
    '|---|---:|---|',
    `| service / C throughput | ${f2(service.rps / ceiling.rps)} | ≥ 0.90 |`,
    `| service / C p99 | ${f2(service.p99 / ceiling.p99)} | ≤ 1.5 |`,
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
  ].join('\n');
  process.stdout.write(`\n${report}\n`);
  writeFileSync(path.join(ROOT, 'bench', 'results', 'latest.md'), `${report}\n`);
  rmSync(work, { recursive: true, force: true });
  if (failedService > 0) {
    console.error(`FAIL: ${failedService} requests of the service's runs were not answered 2xx`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
