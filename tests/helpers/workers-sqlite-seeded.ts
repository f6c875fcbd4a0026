/**
 * The built server at WORKERS=2 (unless `env` says otherwise) on a SQLite file of its own. The file is migrated
 * first, and a connection of the test's own stays open on it while the workers start: two workers opening a file
 * whose WAL no process holds meet `database is locked` at once in their start-up writes (the WAL's recovery, which
 * the busy timeout does not cover). Kept beside tests/helpers/workers-sqlite.ts (slot 1 starts first since h36-sqlite),
 * which the feed and leader tests could move to.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { seedStore } from './plant-store-cli';
import { startServer, tempDataDir, type ServerProcess } from './server-process';

export type SqliteWorkers = { server: ServerProcess; file: string; dir: string; close: () => Promise<void> };

export async function startSqliteWorkers(env: Record<string, string> = {}): Promise<SqliteWorkers> {
  const dir = tempDataDir();
  const file = path.join(dir, 'plants.db');
  seedStore(file, 0);
  const held = new Database(file);
  held.prepare('SELECT 1').get();
  let server: ServerProcess;
  try {
    server = await startServer({ WORKERS: '2', DATABASE_URL: `file:${file}`, ...env });
  } catch (error) {
    held.close();
    throw error;
  }
  return {
    server,
    file,
    dir,
    close: async () => {
      held.close();
      await server.stop();
    },
  };
}

/** The `q` quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
