/**
 * The built server at WORKERS=2 (unless `env` says otherwise) on a SQLite file of its own per test, the SQLite
 * twin of workersForEach (tests/helpers/workers.ts): started in a fresh directory, resolved once the supervisor
 * logs `listening` (every worker listens), stopped after the test. `storedIds` reads the file on a connection of
 * its own, as a restart would.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { requestsUntilKilled } from './raw-request';
import { startServer, tempDataDir, type ServerProcess } from './server-process';
import { TOKEN } from './test-app';

export type SqliteWorkers = { service: ServerProcess; file: string; dir: string };

export function sqliteWorkersForEach() {
  const started: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((service) => (service.child.exitCode === null ? service.stop() : service.exited)));
  });
  return {
    /** `file`: the store's path relative to the server's directory (its cwd), `data/plants.db` unless given. */
    start: async (env: Record<string, string> = {}, options: { dir?: string; file?: string } = {}): Promise<SqliteWorkers> => {
      const dir = options.dir ?? tempDataDir();
      const relative = options.file ?? 'data/plants.db';
      const service = await startServer({ WORKERS: '2', DATABASE_URL: `file:./${relative}`, ...env }, { cwd: dir });
      started.push(service);
      return { service, file: path.join(dir, relative), dir };
    },
  };
}

/** Every plant id in the file, as text. */
export function storedIds(file: string): Set<string> {
  const db = new Database(file, { readonly: true });
  try {
    db.defaultSafeIntegers(true);
    return new Set((db.prepare('SELECT id FROM plants').all() as { id: bigint }[]).map((row) => String(row.id)));
  } finally {
    db.close();
  }
}

/**
 * `connections` loops of creates on keep-alive connections until `stop()`: each acknowledged id (a 200) is kept.
 * Resolves `stop()` once every loop has had its last answer.
 */
export function createsUnderLoad(url: string, connections: number, timeoutMs = 10_000) {
  const client = requestsUntilKilled(TOKEN, timeoutMs);
  const acknowledged: string[] = [];
  const statuses = new Map<number, number>();
  let running = true;
  let next = Date.now() * 1000;
  const loops = Array.from({ length: connections }, async () => {
    while (running) {
      const id = String((next += 1));
      const { status } = await client.send(url, 'POST', '/plants', { body: `{"id":${id},"name":"Fern ${id}","tag":"load"}` });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) acknowledged.push(id);
    }
  });
  return {
    acknowledged,
    statuses,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      client.close();
    },
  };
}

/** Another process's write lock on the file (a connection in `BEGIN IMMEDIATE`), until `release()`. */
export function holdWriteLock(file: string): { release: () => void } {
  const locker = new Database(file);
  locker.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      locker.exec('ROLLBACK');
      locker.close();
    },
  };
}

export type StartedSqliteWorkers = { server: ServerProcess; file: string; dir: string; close: () => Promise<void> };

/** The same start outside a per-test fixture: the caller closes it (tests that start it inside a test's body). */
export async function startSqliteWorkers(env: Record<string, string> = {}): Promise<StartedSqliteWorkers> {
  const dir = tempDataDir();
  const file = path.join(dir, 'plants.db');
  const server = await startServer({ WORKERS: '2', DATABASE_URL: `file:${file}`, ...env });
  return {
    server,
    file,
    dir,
    close: async () => {
      await server.stop();
    },
  };
}

/** The `q` quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
