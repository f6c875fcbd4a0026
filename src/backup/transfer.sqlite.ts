/**
 * Export from and import into a SQLite store: the files, connections and transactions around a resource's half
 * (its SqliteTransfer, e.g. src/plants/plant.transfer.sqlite.ts). The export reads one snapshot (a read
 * transaction, so a service can keep writing); the import is one write transaction, migrations included, so it
 * lands whole or not at all. Each record it creates gets its change event in that transaction, and no webhook.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openDatabase } from '../db/database.sqlite';
import { loadMigrations, migrate } from '../db/migrate.sqlite';
import { refuseLostStore } from '../db/health.sqlite';
import type { Export, ImportResult, Lines } from '../transfer';
import { removeWithCompanions } from './files';
import { lastPosition, markPositions } from './restore-mark';
import { BackupError } from './store-file';
import type { SqliteTransfer } from './transfer';

export function exportSqlite(file: string, busyTimeoutMs: number, transfer: SqliteTransfer): Export {
  if (!existsSync(file)) throw new BackupError(`no SQLite store at ${file}`);
  const db = new Database(file, { fileMustExist: true, timeout: busyTimeoutMs });
  db.defaultSafeIntegers(true);
  try {
    db.exec('BEGIN');
    const holds = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(transfer.table) !== undefined;
    if (!holds) throw new BackupError(`${file} holds no ${transfer.table} table: it is not a Plant Store, or was never migrated`);
  } catch (error) {
    db.close();
    throw error;
  }
  return transfer.export(db, () => db.close());
}

/** `defaultTenant`: the tenant name (TENANT_DEFAULT) whose lines go to the shared tenant. */
export async function importSqlite(file: string, lines: Lines, busyTimeoutMs: number, transfer: SqliteTransfer, defaultTenant?: string): Promise<ImportResult> {
  const existed = existsSync(file);
  if (!existed) {
    try {
      refuseLostStore(file);
    } catch (error) {
      throw new BackupError((error as Error).message);
    }
  }
  const db = openDatabase(file, { busyTimeoutMs });
  try {
    // One write transaction from the first migration to the last record: a failure anywhere leaves the file as it was.
    db.exec('BEGIN IMMEDIATE');
    migrate(db, loadMigrations());
    const at = Date.now();
    // A store that never handed out a position is being filled from another one (a restore from an export, a
    // move between stores): it continues past every position that one may have handed out, as a restore does.
    let lastPos = lastPosition(db);
    if (lastPos === 0n) lastPos = markPositions(db, 0n, new Date(at));
    const result = await transfer.import(db, lines, lastPos, at, defaultTenant);
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    if (!existed) await removeWithCompanions(file);
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY') throw new BackupError(`${file} is locked by another writer (a service busy writing?); try again, or stop it first`);
    throw error;
  } finally {
    if (db.open) db.close();
  }
}
