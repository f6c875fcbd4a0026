import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import supertest from 'supertest';
import type { Config } from '../../src/config';
import { openDatabase, type Db } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import type { Lifecycle } from '../../src/lifecycle';
import { loadServiceConfig, startService, type Service } from '../../src/service';
import { createStore } from '../../src/store';
import { sqliteStoreOver } from '../../src/store/store.sqlite';
import { captureLogs, type LogLine } from './common';
import { freePort } from './ports';
import { adminUrl, createTestDatabase, outboxRows, plantRows, runSql, type OutboxRow } from './postgres';
import { guardPostgres, guardSqlite } from './tenant-sql-guard';
import { startWorkersTestApp } from './test-app.workers';
import { testWorkers } from './test-workers';

import { OTHER_TOKEN, TOKEN } from './tokens';

export { OTHER_TOKEN, TOKEN } from './tokens';

export type { LogLine } from './common';

export type StoreKind = 'sqlite' | 'postgres';

/**
 * The store startTestApp uses when a test does not name one: SQLite, or PostgreSQL under TEST_STORE=postgres
 * (jest.config.ts runs tests/api that way as its second project when TEST_DATABASE_URL is set).
 */
export const defaultStore = (): StoreKind => (process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite');

/** A close that a test may call itself (to read what the drain flushed) before its fixture calls it again. */
const once = (run: () => Promise<void>): (() => Promise<void>) => {
  let closing: Promise<void> | undefined;
  return () => (closing ??= run());
};

export type TestApp = {
  request: supertest.Agent;
  url: string;
  store: StoreKind;
  /** The SQLite file, or the PostgreSQL database's URL. */
  dbPath: string;
  logs: LogLine[];
  rawLogs: string[];
  lifecycle: Lifecycle;
  /** The SQLite connection the app uses (SQLite only). */
  db: Db;
  /** A second, independent connection to the same file: what is really on disk (SQLite only). */
  inspect: () => Database.Database;
  /** The scrape URL when the env turns metrics on (any METRICS_PORT but 0; the listener takes an ephemeral port). */
  metricsUrl?: string;
  close: () => Promise<void>;
};

// Rate limiting and load shedding are off unless a test turns them on: the tests share this event loop with
// jest and the client, and a busy CI machine would otherwise shed their requests. Metrics are off unless asked.
// The drain is the production one, bounded to a second so a test that leaves a request hanging closes quickly.
const TEST_ENV = {
  AUTH_TOKENS: `${TOKEN},${OTHER_TOKEN}`,
  RATE_LIMIT_PER_MINUTE: '0',
  LOAD_SHED_LAG_MS: '0',
  SHUTDOWN_TIMEOUT_MS: '1000',
  PORT: '0',
  HOST: '127.0.0.1',
};

const testConfig = async (env: Record<string, string>, databaseUrl: string): Promise<Config> =>
  loadServiceConfig({
    ...TEST_ENV,
    DATABASE_URL: databaseUrl,
    ...env,
    // Any METRICS_PORT but 0 turns metrics on, on a port of the test's own: parallel suites would collide on one.
    METRICS_PORT: env.METRICS_PORT === undefined || env.METRICS_PORT === '0' ? '0' : String(await freePort()),
  });

/**
 * At one worker (TEST_WORKERS, ./test-workers): the production service (src/service.ts: its timeouts, connection cap and drain) over a real SQLite file in a
 * temp directory, migrated as at start, listening on an ephemeral 127.0.0.1 port, with its log lines captured.
 * `env` is the environment the config is parsed from. `readonly` opens the app's connection read-only.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { readonly?: boolean; store?: StoreKind } = {},
): Promise<TestApp> {
  const store = options.store ?? defaultStore();
  // Above one worker: the built server with the same environment (./test-app.workers.ts, docs/decisions/tests.md).
  if (testWorkers() > 1) return startWorkersTestApp(TEST_ENV, env, { ...options, store, workers: testWorkers() });
  if (store === 'postgres') return startPostgresTestApp(env);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-test-'));
  const dbPath = path.join(dir, 'plants.db');
  const config = await testConfig(env, `file:${dbPath}`);
  const migrations = loadMigrations();
  const setup = openDatabase(dbPath, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  migrate(setup, migrations);
  if (options.readonly) setup.close();
  const db = options.readonly ? openDatabase(dbPath, { busyTimeoutMs: config.databaseBusyTimeoutMs, readonly: true }) : setup;

  const { rawLogs, logs, logger } = captureLogs(config);
  // The app's own connection, so a test can reach it (app.db); the service closes it at the end of its drain.
  // Under TENANT_SQL_GUARD=on every statement the store prepares must carry the tenant (./tenant-sql-guard).
  const service = await startService(config, logger, {
    store: (hooks, resources) => guardSqlite(db, () => sqliteStoreOver(db, migrations, config, logger, resources, hooks)),
  });
  const inspectors: Database.Database[] = [];

  return {
    request: supertest.agent(service.url),
    url: service.url,
    store: 'sqlite',
    dbPath,
    logs,
    rawLogs,
    lifecycle: service.lifecycle,
    db,
    inspect: () => {
      const connection = new Database(dbPath, { readonly: true });
      connection.defaultSafeIntegers(true);
      inspectors.push(connection);
      return connection;
    },
    metricsUrl: service.metricsUrl,
    close: once(async () => {
      await service.drain();
      for (const connection of inspectors) connection.close();
      rmSync(dir, { recursive: true, force: true });
    }),
  };
}

/** The same service on a fresh PostgreSQL database of its own (TEST_DATABASE_URL names the server), dropped by close(). */
async function startPostgresTestApp(env: Record<string, string>): Promise<TestApp> {
  const server = adminUrl();
  if (server === undefined) throw new Error('a PostgreSQL test app needs TEST_DATABASE_URL');
  const database = await createTestDatabase(server);
  const config = await testConfig({ ...env, DATABASE_URL: database.url }, database.url);
  const { rawLogs, logs, logger } = captureLogs(config);
  let service: Service;
  try {
    service = await startService(config, logger, { store: (hooks, resources) => guardPostgres(createStore(config, logger, resources, hooks)) });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const sqliteOnly = (what: string) => () => {
    throw new Error(`${what} is the SQLite connection; this app runs on PostgreSQL (use storedRows)`);
  };
  return {
    request: supertest.agent(service.url),
    url: service.url,
    store: 'postgres',
    dbPath: database.url,
    logs,
    rawLogs,
    lifecycle: service.lifecycle,
    get db(): Db {
      return sqliteOnly('app.db')();
    },
    inspect: sqliteOnly('app.inspect()'),
    metricsUrl: service.metricsUrl,
    close: once(async () => {
      await service.drain();
      await database.drop();
    }),
  };
}

export const bearer = (token: string = TOKEN) => ({ Authorization: `Bearer ${token}` });

/** POSTs a JSON body (or a raw string sent as is) to /plants with the test token. */
export function postPlant(app: TestApp, body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return app.request
    .post('/plants')
    .set({ 'Content-Type': 'application/json', ...bearer(), ...headers })
    .send(text);
}

export function storedRows(app: TestApp): { id: bigint; name: string; tag: string | null }[] {
  if (app.store === 'postgres') return plantRows(app.dbPath);
  return app.inspect().prepare('SELECT id, name, tag FROM plants ORDER BY id').all() as { id: bigint; name: string; tag: string | null }[];
}

/** The row stored under one id, read on a connection of its own, or undefined. */
export function storedPlant(app: TestApp, id: bigint | number): { id: bigint; name: string; tag: string | null } | undefined {
  if (app.store === 'postgres') return plantRows(app.dbPath, `id = ${BigInt(id)}`)[0];
  return app.inspect().prepare('SELECT id, name, tag FROM plants WHERE id = ?').get(BigInt(id)) as
    | { id: bigint; name: string; tag: string | null }
    | undefined;
}

/** The webhook outbox in write order (all of it, or one plant's events), read on a connection of its own. */
export function storedEvents(app: TestApp, plantId?: bigint | number): OutboxRow[] {
  if (app.store === 'postgres') return outboxRows(app.dbPath, plantId === undefined ? 'TRUE' : `plant_id = ${BigInt(plantId)}`);
  const columns = 'event_id, subscriber, plant_id, payload, status, attempts, last_error, trace_context';
  const connection = app.inspect();
  return (
    plantId === undefined
      ? connection.prepare(`SELECT ${columns} FROM webhook_outbox ORDER BY seq`).all()
      : connection.prepare(`SELECT ${columns} FROM webhook_outbox WHERE plant_id = ? ORDER BY seq`).all(BigInt(plantId))
  ) as OutboxRow[];
}

/** Drops a table under the running app from a connection of its own: every statement on it becomes a bug (500). */
export function dropTable(app: TestApp, table: string): void {
  if (app.store === 'postgres') return runSql(app.dbPath, `DROP TABLE ${table}`);
  const dropper = new Database(app.dbPath);
  dropper.exec(`DROP TABLE ${table}`);
  dropper.close();
}
