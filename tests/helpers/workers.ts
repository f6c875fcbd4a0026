/**
 * The built server at WORKERS > 1 on a fresh PostgreSQL database per test, and what its tests read of it: the
 * workers' pids (the supervisor's children), requests on connections of their own (so round-robin spreads them),
 * and a request held in flight.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { createTestDatabase, type TestDatabase } from './postgres';
import { rawRequest, type RawResponse } from './raw-request';
import { startServer, type ServerProcess } from './server-process';
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
 * A fresh database for each test, and `start(env)`: the server at WORKERS=2 (unless `env` says otherwise) on it,
 * resolved once every worker has migrated; each server is stopped and the database dropped after the test.
 */
export function workersForEach(server: string) {
  let database: TestDatabase | undefined;
  const started: ServerProcess[] = [];
  beforeEach(async () => {
    database = await createTestDatabase(server);
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((process) => process.stop('SIGKILL')));
    await database?.drop();
    database = undefined;
  });
  return {
    get url(): string {
      if (database === undefined) throw new Error('workersForEach: the database exists only while a test runs');
      return database.url;
    },
    /** `nodeArgs` reach the workers too (cluster forks with the supervisor's execArgv). */
    start: async (env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<ServerProcess> => {
      const workers = Number(env.WORKERS ?? '2');
      const process = await startServer({ WORKERS: String(workers), DATABASE_URL: database?.url ?? '', ...env }, { nodeArgs });
      started.push(process);
      await waitForLines(process, (line) => line.msg === 'database ready', workers);
      return process;
    },
  };
}

/** A POST /plants on its own socket whose body is sent in two halves, so it can be held in flight. */
export function halfSentRequest(url: string, body: string) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let response = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    response += chunk;
  });
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
  );
  return {
    finish: () => {
      socket.write(body.slice(half));
      return closed;
    },
  };
}

export const statusOf = (rawResponse: string): number => Number(rawResponse.slice(9, 12));
