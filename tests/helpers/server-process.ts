import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOKEN } from './test-app';

const ROOT = path.resolve(__dirname, '..', '..');

export type ServerProcess = {
  child: ChildProcess;
  url: string;
  lines: Record<string, unknown>[];
  stderr: () => string;
  waitForLine: (predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  /** Sends the signal and resolves with how the process ended. */
  stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export function tempDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'plants-process-'));
}

/** Runs the built server (dist/server.js) as production does, on an ephemeral port of 127.0.0.1. */
export async function startServer(
  env: Record<string, string> = {},
  options: { expectListening?: boolean; cwd?: string; nodeArgs?: string[] } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), path.join(ROOT, 'dist', 'server.js')], {
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
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
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
  }
  return {
    child,
    url,
    lines,
    stderr: () => stderr,
    waitForLine,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}
