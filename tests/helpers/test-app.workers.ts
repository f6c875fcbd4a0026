/**
 * startTestApp above one worker (TEST_WORKERS, tests/helpers/test-workers.ts): the built server (dist/server.js, the
 * supervisor and its workers, as production runs it) over a SQLite file in a temp directory or a fresh PostgreSQL
 * database, with the environment the in-process app gets, and a TestApp of the same shape. What only the jest
 * process can reach (app.lifecycle, a read-only connection for the app, the tenant SQL guard) is not there: tests
 * that need it run at one worker only (perProcess). docs/decisions/tests.md, "Tests at several workers".
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import supertest from 'supertest';
import { openDatabase, type Db } from '../../src/db/database.sqlite';
import type { LogLine } from './common';
import { freePort } from './ports';
import { adminUrl, createTestDatabase, type TestDatabase } from './postgres';
import { startServer, type ServerProcess } from './server-process';
import type { StoreKind, TestApp } from './test-app';

// How long a request's answer waits for its request line: the workers and the supervisor each write their log in
// batches flushed every 100 ms, so a line is normally there within 200 ms of the answer.
const REQUEST_LINE_MS = 5_000;
// The process gets this long to drain and exit on SIGTERM before it is killed (its drain is bounded to a second).
const EXIT_MS = 10_000;

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'del', 'head', 'options'] as const;

type Thenable = { then: (resolve?: (value: unknown) => unknown, reject?: (reason: unknown) => unknown) => Promise<unknown> };

/**
 * A supertest agent whose every answer resolves only once the service's request line for it (the `request` line
 * with the answer's X-Request-Id) has reached app.logs, so a test reads the log as it would in one process. An
 * answer without the header (one the service did not make) resolves at once; a line that never comes, after
 * REQUEST_LINE_MS, and the test's own assertion on the log then says what is missing.
 */
function agentWaitingForLines(url: string, requestLine: (reqId: string) => Promise<void>): supertest.Agent {
  const agent = supertest.agent(url);
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (!(METHODS as readonly (string | symbol)[]).includes(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => Thenable).apply(target, args);
        const then = test.then.bind(test);
        test.then = (resolve, reject) =>
          then(async (response) => {
            const reqId = (response as { headers?: Record<string, string | undefined> }).headers?.['x-request-id'];
            if (reqId !== undefined) await requestLine(reqId);
            return response;
          }).then(resolve, reject);
        return test;
      };
    },
  });
}

/**
 * Whether the running test file reads the log (app.logs, app.rawLogs): only then does each answer wait for its line,
 * which costs up to 200 ms a request (a file of sequential pages would take minutes).
 */
function fileReadsLogs(): boolean {
  const file = expect.getState().testPath;
  return file === undefined || /\blogs\b|rawLogs/.test(readFileSync(file, 'utf8'));
}

/** Resolves once `reqId`'s request line is among the server's lines, or after REQUEST_LINE_MS. */
function requestLineOf(server: ServerProcess): (reqId: string) => Promise<void> {
  return (reqId) =>
    server
      .waitForLine((line) => line.msg === 'request' && line.reqId === reqId, REQUEST_LINE_MS)
      .then(
        () => undefined,
        () => undefined,
      );
}

/** The server's stop, bounded: SIGTERM, then SIGKILL if it has not exited in EXIT_MS. */
async function stopBounded(server: ServerProcess): Promise<void> {
  const timer = setTimeout(() => server.child.kill('SIGKILL'), EXIT_MS);
  await server.stop('SIGTERM');
  clearTimeout(timer);
}

/**
 * Resolves with the server's URL once it listens with every worker ready. A refused start rejects with what the service said
 * (its fatal line, or stderr for a configuration error), as startService throws it in one process.
 */
async function readyOrRefused(server: ServerProcess, store: StoreKind, workers: number): Promise<string> {
  // PostgreSQL migrates after listening: the app is ready when every worker has said so, as one process is when
  // startService resolves. SQLite's workers listen only once slot 1 has migrated.
  const ready = store === 'postgres' ? (line: Record<string, unknown>) => line.msg === 'database ready' : (line: Record<string, unknown>) => line.msg === 'listening';
  const count = store === 'postgres' ? workers : 1;
  try {
    await server.waitForLine(() => server.lines.filter(ready).length >= count, 30_000);
  } catch (error) {
    const fatal = server.lines.filter((line) => line.level === 60).map((line) => String(line.msg));
    const said = [...fatal, server.stderr().trim()].filter((text) => text !== '');
    if (said.length === 0) throw error;
    await server.stop('SIGKILL');
    throw new Error(said.join('\n'), { cause: error });
  }
  const listening = server.lines.find((line) => line.msg === 'listening');
  return `http://127.0.0.1:${String(listening?.port)}`;
}

type Place = { store: StoreKind; databaseUrl: string; dbPath: string; remove: () => Promise<void> };

async function placeFor(store: StoreKind): Promise<Place> {
  if (store === 'postgres') {
    const server = adminUrl();
    if (server === undefined) throw new Error('a PostgreSQL test app needs TEST_DATABASE_URL');
    const database: TestDatabase = await createTestDatabase(server);
    return { store, databaseUrl: database.url, dbPath: database.url, remove: database.drop };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-test-'));
  const dbPath = path.join(dir, 'plants.db');
  return {
    store,
    databaseUrl: `file:${dbPath}`,
    dbPath,
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/**
 * `base` is the environment the in-process app's config is read from (tests/helpers/test-app.ts) without its
 * DATABASE_URL and METRICS_PORT, which are chosen here; `workers` the WORKERS the server gets unless `env` sets it.
 */
export async function startWorkersTestApp(
  base: Record<string, string>,
  env: Record<string, string>,
  options: { readonly?: boolean; store: StoreKind; workers: number },
): Promise<TestApp> {
  if (options.readonly === true) {
    throw new Error('a read-only app connection exists in one process only: mark the test perProcess (tests/helpers/test-workers.ts)');
  }
  const place = await placeFor(options.store);
  const metricsPort = env.METRICS_PORT === undefined || env.METRICS_PORT === '0' ? 0 : await freePort();
  let server: ServerProcess;
  let url: string;
  try {
    server = await startServer(
      { ...base, WORKERS: String(options.workers), ...env, DATABASE_URL: place.databaseUrl, METRICS_PORT: String(metricsPort) },
      { expectListening: false },
    );
    url = await readyOrRefused(server, place.store, Number(env.WORKERS ?? options.workers));
  } catch (error) {
    await place.remove();
    throw error;
  }
  const connections: Database.Database[] = [];
  let own: Db | undefined;
  const sqliteOnly = (what: string) => (): never => {
    throw new Error(`${what} is the SQLite connection; this app runs on PostgreSQL (use storedRows)`);
  };
  const inProcessOnly = (): never => {
    throw new Error('app.lifecycle is the service in the jest process: mark the test perProcess (tests/helpers/test-workers.ts)');
  };
  let closing: Promise<void> | undefined;
  return {
    request: fileReadsLogs() ? agentWaitingForLines(url, requestLineOf(server)) : supertest.agent(url),
    url,
    store: place.store,
    dbPath: place.dbPath,
    logs: server.lines as LogLine[],
    rawLogs: server.rawLines,
    get lifecycle(): never {
      return inProcessOnly();
    },
    // A connection of the test's own on the same file, opened as the service opens its own: what a test does with
    // it (hold a lock, change a row) another process does to the service.
    get db(): Db {
      if (place.store === 'postgres') return sqliteOnly('app.db')();
      own ??= openDatabase(place.dbPath, { busyTimeoutMs: Number(env.DATABASE_BUSY_TIMEOUT_MS ?? '2000') });
      return own;
    },
    inspect:
      place.store === 'postgres'
        ? sqliteOnly('app.inspect()')
        : () => {
            const connection = new Database(place.dbPath, { readonly: true });
            connection.defaultSafeIntegers(true);
            connections.push(connection);
            return connection;
          },
    metricsUrl: metricsPort === 0 ? undefined : `http://127.0.0.1:${metricsPort}/metrics`,
    close: () =>
      (closing ??= (async () => {
        await stopBounded(server);
        own?.close();
        for (const connection of connections) connection.close();
        await place.remove();
      })()),
  };
}
