/**
 * What a SQLite store file at rest holds and whether it is sound: PRAGMA integrity_check, the migrations it
 * records against this build's, and its plant count. Used on a backup before it gets its final name and on a
 * file before a restore puts it in place; it opens only private copies, never a file a service has open.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { MigrationError, pendingMigrations, type Migration } from '../db/migrations';

export class BackupError extends Error {}

export type StoreFacts = { plants: number; migration: string | null };

const MAX_REPORTED_PROBLEMS = 3;

/** The last migration of the list, or null for none: the level a store file or a build is at. */
export const levelOf = (names: readonly string[]): string | null => names.at(-1) ?? null;

/**
 * Checks the file and turns it into a single self-contained file (rollback journal, no -wal beside it), so the
 * bytes checksummed are the whole store. Throws BackupError saying what is wrong.
 */
export function inspectStoreFile(file: string, migrations: readonly Migration[], label = file): StoreFacts {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 0 });
  } catch (error) {
    throw new BackupError(`${label} cannot be opened as a SQLite database: ${(error as Error).message}`);
  }
  try {
    db.pragma('journal_mode = DELETE');
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
    if (problems.length !== 1 || problems[0] !== 'ok') {
      throw new BackupError(`${label} fails SQLite's integrity check: ${problems.slice(0, MAX_REPORTED_PROBLEMS).join('; ')}`);
    }
    const hasTable = (name: string) => db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined;
    if (!hasTable('schema_migrations') || !hasTable('plants')) {
      throw new BackupError(`${label} is a SQLite database but not a Plant Store (no schema_migrations or plants table)`);
    }
    const applied = db.prepare('SELECT name, checksum FROM schema_migrations ORDER BY name').all() as { name: string; checksum: string }[];
    const known = new Set(migrations.map((migration) => migration.name));
    const unknown = applied.filter((row) => !known.has(row.name)).map((row) => row.name);
    if (unknown.length > 0) {
      throw new BackupError(
        `${label} is at migration ${levelOf(applied.map((row) => row.name))}, newer than this build (which knows up to ` +
          `${levelOf(migrations.map((migration) => migration.name))}): restore it with the plant-store version that wrote it`,
      );
    }
    pendingMigrations(migrations, new Map(applied.map((row) => [row.name, row.checksum])));
    const plants = db.prepare('SELECT count(*) FROM plants').pluck().get() as number;
    return { plants, migration: levelOf(applied.map((row) => row.name)) };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    if (error instanceof MigrationError) throw new BackupError(`${label}: ${error.message}`);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      throw new BackupError(`${label} is not a sound SQLite database (${code}: ${(error as Error).message})`);
    }
    throw error;
  } finally {
    db.close();
  }
}

export type CheckedFile = StoreFacts & { sha256: string; bytes: number };

type WorkerAnswer = { ok: true; facts: CheckedFile } | { ok: false; message: string; refusal: boolean };

/** inspectStoreFile and the file's SHA-256 on a worker thread (inspect.worker.ts), so the thread that asks stays free to serve. */
export function inspectStoreFileAside(file: string, label: string): Promise<CheckedFile> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(path.join(__dirname, 'inspect.worker.js'), { workerData: { file, label } });
    let answered = false;
    worker.once('message', (answer: WorkerAnswer) => {
      answered = true;
      if (answer.ok) resolve(answer.facts);
      else reject(answer.refusal ? new BackupError(answer.message) : new Error(answer.message));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the check of ${label} ended without an answer (worker exit ${code})`));
    });
  });
}
