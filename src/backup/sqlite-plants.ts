/**
 * Export from and import into a SQLite store: the files, connections and transactions around the plant half
 * (src/plants/plant.transfer.sqlite.ts). The export reads one snapshot (a read transaction, so a service can keep
 * writing); the import is one write transaction, migrations included, so it lands whole or not at all. Each plant
 * it creates gets its plant.created change event in that transaction, and no webhook.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openDatabase } from '../db/database';
import { loadMigrations, migrate } from '../db/migrate';
import { refuseLostStore } from '../db/sqlite-health';
import type { NewPlant } from '../plants/plant.schemas';
import type { ImportResult, PlantExport } from '../plants/plant.transfer';
import { exportPlantsSqlite, holdsPlants, importPlantsSqlite } from '../plants/plant.transfer.sqlite';
import { removeWithCompanions } from './files';
import { parsePlantLine } from './plant-lines';
import { lastPosition, markPositions } from './restore-mark';
import { BackupError } from './store-file';

export function exportSqlite(file: string, busyTimeoutMs: number): PlantExport {
  if (!existsSync(file)) throw new BackupError(`no SQLite store at ${file}`);
  const db = new Database(file, { fileMustExist: true, timeout: busyTimeoutMs });
  db.defaultSafeIntegers(true);
  try {
    db.exec('BEGIN');
    if (!holdsPlants(db)) throw new BackupError(`${file} holds no plants table: it is not a Plant Store, or was never migrated`);
  } catch (error) {
    db.close();
    throw error;
  }
  return exportPlantsSqlite(db, () => db.close());
}

async function* parsed(lines: AsyncIterable<[string, number]>): AsyncGenerator<[NewPlant, number]> {
  for await (const [text, line] of lines) yield [parsePlantLine(text, line), line];
}

export async function importSqlite(file: string, lines: AsyncIterable<[string, number]>, busyTimeoutMs: number): Promise<ImportResult> {
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
    // One write transaction from the first migration to the last plant: a failure anywhere leaves the file as it was.
    db.exec('BEGIN IMMEDIATE');
    migrate(db, loadMigrations());
    const at = Date.now();
    // A store that never handed out a position is being filled from another one (a restore from an export, a
    // move between stores): it continues past every position that one may have handed out, as a restore does.
    let lastPos = lastPosition(db);
    if (lastPos === 0n) lastPos = markPositions(db, 0n, new Date(at));
    const result = await importPlantsSqlite(db, parsed(lines), lastPos, at);
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
