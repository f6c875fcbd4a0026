// Debian's wrk as the workers section's load generator (bench/workers.wrk.lua): it costs less CPU per request
// than autocannon, which matters when it shares the service's two cores. Also the service started on both
// cores with WORKERS set, and its CPU summed over the supervisor and its workers.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CURRENT, ROOT, start, TICKS_PER_SECOND, TOKEN, type Runtime, type Started } from './lib';

export const WRK = '/usr/bin/wrk';
export const wrkPresent = (): boolean => existsSync(WRK);

/** Both cores, for the service and for wrk alike: WORKERS=auto then sees 2 (os.availableParallelism reads the affinity). */
export const CORES = '0,1';

export type WrkLoad = 'reads' | 'pages' | 'creates';

export type WrkOptions = {
  port: number;
  load: WrkLoad;
  seconds: number;
  connections: number;
  stored?: number;
  /** Paced: requests per second offered at most (bench/workers.wrk.lua); 0 or absent: a closed loop. */
  rate?: number;
  /** Paced: the first request waits this long after wrk starts. */
  holdMs?: number;
  timeoutSeconds?: number;
  /** Each answer's latency by its status (bench/workers.wrk.lua, WRK_TIMED): the service then skips making an id. */
  timed?: boolean;
};

export type WrkResult = {
  seconds: number;
  requests: number;
  ok: number;
  shed: number;
  other: number;
  /** connect, read and write errors and timeouts, as wrk counts them. */
  errors: number;
  timeouts: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Timed runs only (-1 otherwise, or when none): the 2xx answers' p99 and longest, and the 503s'. */
  okP99Ms: number;
  okMaxMs: number;
  shedP99Ms: number;
  shedMaxMs: number;
  /** wrk's own user + system CPU, seconds. */
  wrkCpuSeconds: number;
};

type WrkJson = {
  durationUs: number;
  requests: number;
  ok: number;
  shed: number;
  other: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  okP99Ms: number;
  okMaxMs: number;
  shedP99Ms: number;
  shedMaxMs: number;
};

const THREADS = 2;
let runs = 0;

/** bash's `times` after wrk: its second line is the user and system time of the shell's children, wrk alone. */
function childrenCpuSeconds(stdout: string): number {
  const lines = stdout.trim().split('\n');
  const match = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines.at(-1) ?? '');
  if (match === null) throw new Error(`no CPU times after wrk's output: ${stdout}`);
  const [, um, us, sm, ss] = match.map(Number) as [number, number, number, number, number];
  return um * 60 + us + sm * 60 + ss;
}

/** One wrk run on both cores; resolves with its figures once it exits. */
export function runWrk(options: WrkOptions): Promise<WrkResult> {
  runs += 1;
  const connections = Math.max(THREADS, options.connections);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    WRK_LOAD: options.load,
    WRK_STORED: String(options.stored ?? 1),
    // Ids of the run's creates: 1e11 apart per run, past the stored ones, below 2^53 for Lua's doubles.
    WRK_ID_BASE: String(1e11 * runs),
    WRK_TOKEN: TOKEN,
    WRK_RATE: String(options.rate ?? 0),
    WRK_HOLD_MS: String(options.holdMs ?? 0),
    WRK_THREADS: String(THREADS),
    WRK_TIMED: options.timed === true ? '1' : '0',
  };
  const args = ['-t', String(THREADS), '-c', String(connections), '-d', `${options.seconds}s`, '--timeout', `${options.timeoutSeconds ?? 10}s`];
  args.push('-s', path.join(ROOT, 'bench', 'workers.wrk.lua'), `http://127.0.0.1:${options.port}`);
  const script = `${WRK} "$@"; code=$?; times; exit $code`;
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', CORES, 'bash', '-c', script, 'wrk', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = stdout.split('\n').find((text) => text.startsWith('WRK_JSON '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk exited ${code}: ${stderr}${stdout}`));
        return;
      }
      const json = JSON.parse(line.slice('WRK_JSON '.length)) as WrkJson;
      resolve({
        seconds: json.durationUs / 1e6,
        requests: json.requests,
        ok: json.ok,
        shed: json.shed,
        other: json.other,
        errors: json.connect + json.read + json.write + json.timeout,
        timeouts: json.timeout,
        p50Ms: json.p50Us / 1000,
        p99Ms: json.p99Us / 1000,
        maxMs: json.maxUs / 1000,
        okP99Ms: json.okP99Ms,
        okMaxMs: json.okMaxMs,
        shedP99Ms: json.shedP99Ms,
        shedMaxMs: json.shedMaxMs,
        wrkCpuSeconds: childrenCpuSeconds(stdout),
      });
    });
  });
}

function ticksOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0; // a worker that exited in between
  }
}

/** The children of a process, over all its threads (node:cluster forks from the main thread, but look at all). */
export function childPids(pid: number): number[] {
  const pids = new Set<number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) pids.add(Number(child));
    } catch {
      // a thread that ended in between
    }
  }
  return [...pids];
}

/**
 * CPU seconds so far of the service: utime + stime of the supervisor and of each worker (each process's /proc stat
 * counts all its threads). A worker that exits between two samples takes its CPU with it.
 */
export function serviceCpuSeconds(server: Started): number {
  const pid = server.child.pid ?? 0;
  return [pid, ...childPids(pid)].reduce((sum, each) => sum + ticksOf(each), 0) / TICKS_PER_SECOND;
}

/** Busy CPU seconds of the whole machine so far (every core; /proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

async function waitForLine(file: string, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!readFileSync(file, 'utf8').includes(text)) {
    if (Date.now() > deadline) throw new Error(`no ${text} in ${file} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export type Service = Started & { workers: number };

/**
 * The service on both cores with WORKERS as given ('auto' or a number), ready once every worker listens (the
 * supervisor's `listening` line comes after its workers'; one process logs the same line). `workers`: the
 * processes found serving (the supervisor's children, or 1).
 */
export async function startService(databaseUrl: string, workers: string, env: Record<string, string> = {}, runtime: Runtime = CURRENT): Promise<Service> {
  const server = await start('service', databaseUrl, { ...env, WORKERS: workers }, { ...runtime, cpus: CORES });
  try {
    await waitForLine(server.logFile, '"msg":"listening"');
  } catch (error) {
    await server.stop();
    throw error;
  }
  const children = childPids(server.child.pid ?? 0).length;
  return { ...server, workers: Math.max(1, children) };
}
