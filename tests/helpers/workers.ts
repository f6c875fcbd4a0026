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

/** A process's state letter and start time (clock ticks since boot) from /proc, or undefined when it is gone. */
function statOf(pid: number): { state: string; startTime: string } | undefined {
  try {
    // The command name may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTime: fields[19] ?? '' };
  } catch {
    return undefined;
  }
}

// The start time of each pid childPids returned: a pid the system gave to a new process since is not that process.
const startTimes = new Map<number, string>();

/** The processes the supervisor forked that run now (its children), each remembered with its start time. */
export function childPids(pid: number): number[] {
  let pids: number[];
  try {
    pids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  for (const child of pids) {
    const startTime = statOf(child)?.startTime;
    if (startTime !== undefined) startTimes.set(child, startTime);
  }
  return pids;
}

/** Whether the process childPids saw with this pid still runs: not gone, not a zombie, and not a later process given its pid. */
export const isAlive = (pid: number): boolean => {
  const stat = statOf(pid);
  if (stat === undefined || stat.state === 'Z') return false;
  const seen = startTimes.get(pid);
  return seen === undefined || seen === stat.startTime;
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
