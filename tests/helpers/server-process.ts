import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { TOKEN } from './tokens';
import { testWorkers } from './test-workers';

const ROOT = path.resolve(__dirname, '..', '..');

export type ServerProcess = {
  child: ChildProcess;
  url: string;
  lines: Record<string, unknown>[];
  /** The same lines as written, in the same order. */
  rawLines: string[];
  stderr: () => string;
  waitForLine: (predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  /** Sends the signal and resolves with how the process ended. */
  stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export function tempDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'plants-process-'));
}

/**
 * The built server on a free port with stdout on a FIFO in a temp directory, its store a file beside it. The FIFO is
 * opened read-write here (`fd`, for the caller to close) so the server's open does not wait for a reader and never
 * meets EPIPE; whether anybody reads `fifo` is the test's choice.
 */
export async function startServerOnFifo(env: Record<string, string>, storeName = 'plants') {
  const dir = tempDataDir();
  const fifo = path.join(dir, 'stdout.fifo');
  execFileSync('mkfifo', [fifo]);
  const fd = openSync(fifo, 'r+');
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'server.js')], {
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      AUTH_TOKENS: TOKEN,
      RATE_LIMIT_PER_MINUTE: '0',
      LOAD_SHED_LAG_MS: '0',
      // Never the default 9464: a development server on this host would hold it.
      METRICS_PORT: '0',
      DATABASE_URL: `file:${path.join(dir, `${storeName}.db`)}`,
      WORKERS: String(testWorkers()),
      ...env,
    },
    stdio: ['ignore', fd, 'ignore'],
  });
  return { child, fifo, fd, port };
}

/** Runs the built server (dist/server.js) as production does, on an ephemeral port of 127.0.0.1. */
export async function startServer(
  env: Record<string, string> = {},
  options: {
    expectListening?: boolean;
    cwd?: string;
    nodeArgs?: string[];
    waitForMigrations?: boolean;
    /** `ulimit -n` for the process: its open descriptors at most. */
    fdLimit?: number;
  } = {},
): Promise<ServerProcess> {
  const nodeArgs = [...(options.nodeArgs ?? []), path.join(ROOT, 'dist', 'server.js')];
  const [command, args] =
    options.fdLimit === undefined
      ? [process.execPath, nodeArgs]
      : ['sh', ['-c', `ulimit -n ${options.fdLimit} && exec "$@"`, 'sh', process.execPath, ...nodeArgs]];
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      AUTH_TOKENS: TOKEN,
      RATE_LIMIT_PER_MINUTE: '0',
      // A loaded CI machine can stall the process past the default lag; shedding has its own test.
      LOAD_SHED_LAG_MS: '0',
      // Off unless a test asks: parallel servers would all want the default port 9464.
      METRICS_PORT: '0',
      DATABASE_URL: `file:${path.join(tempDataDir(), 'plants.db')}`,
      // TEST_WORKERS unless the test sets WORKERS (tests/helpers/test-workers.ts).
      WORKERS: String(testWorkers()),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const rawLines: string[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) {
      if (line.trim() === '') continue;
      rawLines.push(`${line}\n`);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    for (const wake of waiters) wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      for (const wake of waiters) wake();
      resolve({ code, signal });
    });
  });

  const waitForLine = (predicate: (line: Record<string, unknown>) => boolean, timeoutMs = 10_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines.find(predicate);
        if (found !== undefined) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        } else if (child.exitCode !== null) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`server exited (${child.exitCode}) before the expected log line; stderr: ${stderr}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no such log line within ${timeoutMs} ms; lines: ${JSON.stringify(lines)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  let url = '';
  if (options.expectListening !== false) {
    const listening = await waitForLine((line) => line.msg === 'listening');
    url = `http://127.0.0.1:${String(listening.port)}`;
    // PostgreSQL migrates after listening (SQLite before): by default, resolve once that run has an outcome in every
    // worker (each migrates; one still migrating answers 503 to what it is sent).
    if (options.waitForMigrations !== false && env.DATABASE_URL?.startsWith('postgres')) {
      const outcome = (line: Record<string, unknown>) => line.msg === 'database ready' || line.msg === 'PostgreSQL cannot be reached; starting unready and retrying';
      const workers = Number(env.WORKERS ?? testWorkers()) || 1;
      await waitForLine((line) => outcome(line) && lines.filter(outcome).length >= workers);
    }
  }
  return {
    child,
    url,
    lines,
    rawLines,
    stderr: () => stderr,
    waitForLine,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}
