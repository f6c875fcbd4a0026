/**
 * Export from and import into a SQLite store. The export reads one snapshot (a read transaction, so a service can
 * keep writing); the import is one write transaction, migrations included, so it lands whole or not at all. Each
 * plant it inserts gets its plant.created change event in that transaction, and no webhook.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openDatabase } from '../db/database';
import { loadMigrations, migrate } from '../db/migrate';
import { refuseLostStore } from '../db/sqlite-health';
import { removeWithCompanions } from './files';
import { lastPosition, markPositions } from './restore-mark';
import { plantLine } from '../plants/plant.json';
import { parsePlantLine } from './plant-lines';
import { conflictMessage, ImportError, PAGE_ROWS, type ImportResult, type PlantExport, type PlantRow } from '../plants/plant.transfer';
import { BackupError } from './store-file';

export function exportSqlite(file: string, busyTimeoutMs: number): PlantExport {
  if (!existsSync(file)) throw new BackupError(`no SQLite store at ${file}`);
  const db = new Database(file, { fileMustExist: true, timeout: busyTimeoutMs });
  db.defaultSafeIntegers(true);
  try {
    db.exec('BEGIN');
    if (db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'plants'").get() === undefined) {
      throw new BackupError(`${file} holds no plants table: it is not a Plant Store, or was never migrated`);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  const total = Number(db.prepare('SELECT count(*) FROM plants').pluck().get());
  const first = db.prepare<[number], PlantRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?');
  const after = db.prepare<[bigint, number], PlantRow>('SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?');
  return {
    total,
    chunks: function* () {
      try {
        let rows = first.all(PAGE_ROWS);
        while (rows.length > 0) {
          yield rows.map(plantLine).join('');
          const last = rows.at(-1) as PlantRow;
          rows = rows.length < PAGE_ROWS ? [] : after.all(last.id, PAGE_ROWS);
        }
      } finally {
        db.close();
      }
    },
  };
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
    const count = db.prepare('SELECT count(*) FROM plants').pluck();
    const insert = db.prepare<[bigint, string, string | null, bigint]>(
      'INSERT INTO plants (id, name, tag, version) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
    );
    // Each new plant's plant.created event, numbered after the last position ever written (AUTOINCREMENT's record).
    const event = db.prepare<[bigint, bigint, string, string | null, number]>(
      "INSERT INTO plant_events (pos, kind, plant_id, name, tag, at) VALUES (?, 'created', ?, ?, ?, ?)",
    );
    const at = Date.now();
    // A store that never handed out a position is being filled from another one (a restore from an export, a
    // move between stores): it continues past every position that one may have handed out, as a restore does.
    let lastPos = lastPosition(db);
    if (lastPos === 0n) lastPos = markPositions(db, 0n, new Date(at));
    const stored = db.prepare<[bigint], { name: string; tag: string | null }>('SELECT name, tag FROM plants WHERE id = ?');
    const before = Number(count.get());
    let read = 0;
    let inserted = 0;
    for await (const [text, line] of lines) {
      const plant = parsePlantLine(text, line);
      read += 1;
      const tag = plant.tag ?? null;
      if (insert.run(plant.id, plant.name, tag, lastPos + 1n).changes === 1) {
        lastPos += 1n;
        event.run(lastPos, plant.id, plant.name, tag, at);
        inserted += 1;
        continue;
      }
      const existing = stored.get(plant.id) as { name: string; tag: string | null };
      if (existing.name !== plant.name || existing.tag !== tag) throw new ImportError(conflictMessage(line, plant, existing));
    }
    const after = Number(count.get());
    if (after !== before + inserted) throw new ImportError(`the store holds ${after} plants after the import, expected ${before + inserted}; nothing was imported`);
    db.exec('COMMIT');
    return { lines: read, inserted, unchanged: read - inserted, before, after };
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
