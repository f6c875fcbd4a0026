/**
 * The built server at WORKERS > 1 on a fresh PostgreSQL database per test, and what its tests read of it: the
 * workers' pids (the supervisor's children) and requests on connections of their own (so round-robin spreads them).
 */
import { readFileSync } from 'node:fs';
import { replicasForEach } from './fixtures';
import { rawRequest, type RawResponse } from './raw-request';
import type { ServerProcess } from './server-process';
import { TOKEN } from './test-app';

export const JSON_HEADERS = { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` };

/** The processes the supervisor forked and that still run. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** One request on a connection of its own: the supervisor hands each new connection to the next worker. */
export const onNewConnection = (url: string, options: Parameters<typeof rawRequest>[1]): Promise<RawResponse> =>
  rawRequest(url, { ...options, headers: { ...options.headers, Connection: 'close' } });

/** Waits until `count` lines match (one per worker, say). */
export const waitForLines = (server: ServerProcess, match: (line: Record<string, unknown>) => boolean, count: number, timeoutMs?: number) =>
  server.waitForLine(() => server.lines.filter(match).length >= count, timeoutMs);

/**
 * A fresh database for each test (replicasForEach), and `start(env)`: the server at WORKERS=2 (unless `env` says
 * otherwise) on it, resolved once every worker has migrated; stopped and the database dropped after the test.
 */
export function workersForEach(server: string) {
  const replicas = replicasForEach(server);
  return {
    get url(): string {
      return replicas.url;
    },
    start: async (env: Record<string, string> = {}): Promise<ServerProcess> => {
      const workers = Number(env.WORKERS ?? '2');
      const [process] = await replicas.start(1, { WORKERS: String(workers), ...env });
      if (process === undefined) throw new Error('workersForEach: the server did not start');
      await waitForLines(process, (line) => line.msg === 'database ready', workers);
      return process;
    },
  };
}
