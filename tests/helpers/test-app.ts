import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import supertest from 'supertest';
import { createApp } from '../../src/app';
import { StaticTokenStore } from '../../src/auth';
import { loadConfig } from '../../src/config';
import { openDatabase, type Db } from '../../src/db/database';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { SERVER_OPTIONS, installHttpEdges } from '../../src/http/http-edges';
import type { Lifecycle } from '../../src/http/lifecycle';
import { createLogger } from '../../src/logger';
import { createMetrics, serveMetrics } from '../../src/metrics';
import { createSqliteWebhooks } from '../../src/webhooks';

export const TOKEN = 'test-token-0123456789abcdefghijklmnopqrstuvwxyz';
export const OTHER_TOKEN = 'other-token-0123456789abcdefghijklmnopqrstuvwxyz';

export type LogLine = Record<string, unknown> & { level: number; msg: string };

export type TestApp = {
  request: supertest.Agent;
  url: string;
  dbPath: string;
  logs: LogLine[];
  rawLogs: string[];
  lifecycle: Lifecycle;
  db: Db;
  /** A second, independent connection to the same file: what is really on disk. */
  inspect: () => Database.Database;
  /** The scrape URL when the env turns metrics on (any METRICS_PORT but 0; the listener takes an ephemeral port). */
  metricsUrl?: string;
  close: () => Promise<void>;
};

/**
 * The production app over a real SQLite file in a temp directory, migrated as at start, listening on an
 * ephemeral 127.0.0.1 port, with its log lines captured. `env` is the environment the config is parsed from.
 */
export async function startTestApp(env: Record<string, string> = {}, options: { readonly?: boolean } = {}): Promise<TestApp> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-test-'));
  const dbPath = path.join(dir, 'plants.db');
  // Rate limiting and load shedding are off unless a test turns them on: the tests share this event loop with
  // jest and the client, and a busy CI machine would otherwise shed their requests.
  const config = loadConfig({
    AUTH_TOKENS: `${TOKEN},${OTHER_TOKEN}`,
    RATE_LIMIT_PER_MINUTE: '0',
    LOAD_SHED_LAG_MS: '0',
    DATABASE_URL: `file:${dbPath}`,
    METRICS_PORT: '0',
    ...env,
  });
  const migrations = loadMigrations();
  const setup = openDatabase(dbPath, { busyTimeoutMs: config.databaseBusyTimeoutMs });
  migrate(setup, migrations);
  if (options.readonly) setup.close();
  const db = options.readonly ? openDatabase(dbPath, { busyTimeoutMs: config.databaseBusyTimeoutMs, readonly: true }) : setup;

  const rawLogs: string[] = [];
  const logs: LogLine[] = [];
  const logger = createLogger(config, {
    write(line: string) {
      rawLogs.push(line);
      logs.push(JSON.parse(line) as LogLine);
    },
  });
  const lifecycle: Lifecycle = { shuttingDown: false };
  const metrics = config.metricsPort === 0 ? undefined : createMetrics();
  const webhooks = createSqliteWebhooks(config, db, logger, metrics?.webhooks);
  const app = createApp({ config, logger, db, migrations, lifecycle, metrics, tokens: new StaticTokenStore(config), outbox: webhooks?.outbox });
  const metricsServer = metrics && (await serveMetrics(metrics.registry, { host: '127.0.0.1', port: 0 }));
  const server = http.createServer(SERVER_OPTIONS, app);
  installHttpEdges(server, logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  webhooks?.start();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const inspectors: Database.Database[] = [];

  return {
    request: supertest.agent(url),
    url,
    dbPath,
    logs,
    rawLogs,
    lifecycle,
    db,
    inspect: () => {
      const connection = new Database(dbPath, { readonly: true });
      connection.defaultSafeIntegers(true);
      inspectors.push(connection);
      return connection;
    },
    metricsUrl: metricsServer?.url,
    close: async () => {
      await metricsServer?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await webhooks?.stop(1000);
      for (const connection of inspectors) connection.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
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
  return app.inspect().prepare('SELECT id, name, tag FROM plants ORDER BY id').all() as { id: bigint; name: string; tag: string | null }[];
}
