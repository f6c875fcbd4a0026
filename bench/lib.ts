// Shared pieces of `npm run bench`: start a target pinned to core 0, drive it with autocannon from this
// process (pinned to core 1 by run.ts), and read its CPU, peak RSS and request log. Sections (bench/*.section.ts)
// use these; run.ts runs the sections in order and writes the report.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { f0, f1, medianFigures, type Figures } from './report';

export * from './report';

export const ROOT = path.resolve(__dirname, '..');
export const TOKEN = 'bench-token-0123456789abcdefghijklmnopqrstuvwxyz';
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
export const CONNECTIONS = 50;
export const STORED = Number(process.env.BENCH_STORED ?? 1_000_000);
export const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

/** The service (dist/server.js), ceiling C, or another script under dist-bench/. */
export type Target = 'service' | 'ceiling' | { script: string; label: string };


export const work = mkdtempSync(path.join(os.tmpdir(), 'plants-bench-'));

let nextId = 10_000_000_000;
/** A fresh id for every create of the whole run, so no create is a retry. */
export const newId = (): number => (nextId += 1);

export function cpuTicks(pid: number): number {
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

/**
 * The node flags of a checkout's `npm start` (the Dockerfile's CMD has the same): every target runs as production
 * does. Not `--env-file-if-exists`: a developer's .env must not reach a measured process.
 */
const productionNodeFlags = (root: string): string[] =>
  (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
    .split(' ')
    .filter((word) => word.startsWith('--') && !word.startsWith('--env-file'));

/**
 * Which node runs a target, on which checkout's dist/, with which flags. Optionally under a tool (`wrapper`: the
 * words before the node binary, such as valgrind's), on other cores than core 0 (`cpus`, as taskset -c reads
 * them), and with longer than 30 s to answer /readyz (`readyWithinMs`: under valgrind a start takes about 15 s).
 */
export type Runtime = { label: string; node: string; root: string; flags: string[]; wrapper?: string[]; cpus?: string; readyWithinMs?: number };

/** This checkout on the node that runs the bench: the pinned Node 24 under npm run bench. */
export const CURRENT: Runtime = { label: `Node ${process.versions.node}`, node: process.execPath, root: ROOT, flags: productionNodeFlags(ROOT) };

/**
 * BENCH_BASELINE: another checkout, built, with its own node_modules (the last commit on Node 20 and
 * better-sqlite3 12, whose addon only loads there), run by BENCH_BASELINE_NODE (default /usr/bin/node) with its
 * own start flags; bench/runtime.section.ts compares it with CURRENT.
 */
export function baselineRuntime(node: string = process.env.BENCH_BASELINE_NODE ?? '/usr/bin/node'): Runtime | undefined {
  const root = process.env.BENCH_BASELINE;
  if (root === undefined || root === '') return undefined;
  const version = spawnSync(node, ['-p', 'process.versions.node']).stdout.toString().trim();
  return { label: `Node ${version}`, node, root: path.resolve(root), flags: productionNodeFlags(root) };
}

export type Started = { child: ChildProcess; port: number; startedAt: number; logFile: string; stop: () => Promise<void> };
let runCount = 0;

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const scriptOf = (target: Target, root: string) =>
  target === 'service'
    ? path.join(root, 'dist', 'server.js')
    : target === 'ceiling'
      ? path.join(root, 'dist-bench', 'ceiling-server.js')
      : path.join(root, 'dist-bench', target.script);

export const labelOf = (target: Target) => (typeof target === 'string' ? target : target.label);

/**
 * Starts a target as in production on core 0, with `databaseUrl` (a file: or postgres: URL) and any extra
 * environment. The server writes its log straight into a file: piped through this process, the log would
 * load the load generator and push back on the server.
 */
export async function start(target: Target, databaseUrl: string, env: Record<string, string> = {}, runtime: Runtime = CURRENT): Promise<Started> {
  runCount += 1;
  const logFile = path.join(work, `${labelOf(target).replace(/\W+/g, '-')}-${runCount}.log`);
  const log = openSync(logFile, 'a');
  const port = await freePort();
  const startedAt = performance.now();
  const nodeFlags = [...runtime.flags, ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const command = [...(runtime.wrapper ?? []), runtime.node, ...nodeFlags, scriptOf(target, runtime.root)];
  const child = spawn('taskset', ['-c', runtime.cpus ?? '0', ...command], {
    cwd: runtime.root,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      AUTH_TOKENS: TOKEN,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
      // Rate limiting is a per-client brake; one load generator with one token would only measure 429s.
      RATE_LIMIT_PER_MINUTE: '0',
      // Metrics off unless a section turns them on (bench/metrics.section.ts measures what they cost).
      METRICS_PORT: '0',
      ...env,
    },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await Promise.race([waitReady(port, runtime.readyWithinMs), exited.then(() => Promise.reject(new Error(`${labelOf(target)} exited before it was ready`)))]);
  } catch (error) {
    // A target that never got ready is stopped here: nobody else holds its pid (a valgrind run would outlive the bench).
    child.kill('SIGKILL');
    throw error;
  }
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

/** POST /plants with a new id each time: the default load. */
export const createRequests = (token: string = TOKEN): autocannon.Request[] => [
  {
    method: 'POST',
    path: '/plants',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    setupRequest: (request) => {
      const id = newId();
      return { ...request, body: `{"id":${id},"name":"Monstera ${id}","tag":"bench"}` };
    },
  },
];

/** `amount`: stop after this many requests, whatever the duration says. */
export type LoadOptions = { connections?: number; overallRate?: number; requests?: autocannon.Request[]; amount?: number; timeoutSeconds?: number };

export function load(port: number, seconds: number, options: LoadOptions = {}): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: options.connections ?? CONNECTIONS,
        duration: seconds,
        overallRate: options.overallRate,
        amount: options.amount,
        timeout: options.timeoutSeconds ?? 10,
        requests: options.requests ?? createRequests(),
      },
      (error: Error | null, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** Warm-up, then one measured load against an already started server; the server is left running. */
export async function measureRunning(server: Started, options: LoadOptions = {}): Promise<Figures> {
  await load(server.port, WARMUP_SECONDS, options);
  const pid = server.child.pid ?? 0;
  const before = cpuTicks(pid);
  const logOffset = readFileSync(server.logFile).length;
  const result = await load(server.port, SECONDS, options);
  const ticks = cpuTicks(pid) - before;
  const rss = peakRssMiB(pid);
  const total = result.requests.total;
  const shed = result.statusCodeStats?.['503']?.count ?? 0;
  const log = readFileSync(server.logFile);
  // The server writes its log in batches that may end inside a line: read from the first whole line after the
  // offset taken before the load to the last whole line.
  const firstWhole = logOffset === 0 || log[logOffset - 1] === 0x0a ? logOffset : log.indexOf(0x0a, logOffset) + 1;
  const requestLines = log
    .subarray(firstWhole, log.lastIndexOf(0x0a) + 1)
    .toString('utf8')
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

/** Starts the target, measures one load, stops it. */
export async function measure(
  target: Target,
  databaseUrl: string,
  options: LoadOptions & { env?: Record<string, string>; runtime?: Runtime } = {},
): Promise<Figures> {
  const server = await start(target, databaseUrl, options.env, options.runtime);
  try {
    return await measureRunning(server, options);
  } finally {
    await server.stop();
  }
}

/**
 * Runs each named measurement ROUNDS times, alternating the order each round so drift of the VM's speed
 * falls on all of them alike, and returns the medians.
 */
export async function alternate<K extends string>(
  measurements: Record<K, () => Promise<Figures>>,
): Promise<{ medians: Record<K, Figures>; runs: Record<K, Figures[]> }> {
  const names = Object.keys(measurements) as K[];
  const runs = Object.fromEntries(names.map((name) => [name, [] as Figures[]])) as Record<K, Figures[]>;
  for (let round = 1; round <= ROUNDS; round += 1) {
    const order = round % 2 === 1 ? names : [...names].reverse();
    for (const name of order) {
      const figures = await measurements[name]();
      runs[name].push(figures);
      console.error(`round ${round} ${name}: ${f0(figures.rps)} req/s, p99 ${figures.p99} ms, ${f0(figures.cpuPerRequestUs)} µs CPU/req, ${f1(figures.peakRssMiB)} MiB, non-2xx ${figures.non2xx}`);
    }
  }
  return { medians: Object.fromEntries(names.map((name) => [name, medianFigures(runs[name])])) as Record<K, Figures>, runs };
}

/** A SQLite file in the bench's work folder, empty or a copy of a template; its URL for DATABASE_URL. */
export function freshStore(name: string, template?: string): string {
  const file = path.join(work, `${name}.db`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  if (template !== undefined) copyFileSync(template, file);
  return `file:${file}`;
}
