import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export function openDatabase(file: string, options: { busyTimeoutMs: number; readonly?: boolean }): Db {
  if (!options.readonly) mkdirSync(path.dirname(file), { recursive: true });
  // `timeout` is how long a statement waits on a file another connection has locked before SQLITE_BUSY.
  const db = new Database(file, { timeout: options.busyTimeoutMs, readonly: options.readonly ?? false });
  if (!options.readonly) {
    // WAL lets readers run beside the writer (better-sqlite3 docs/performance.md).
    db.pragma('journal_mode = WAL');
  }
  // A 200 promises the row is on disk: in WAL mode NORMAL may lose the last commits on power loss, FULL may not
  // (https://www.sqlite.org/pragma.html#pragma_synchronous).
  db.pragma('synchronous = FULL');
  // The bundled build enables it already (docs/compilation.md); stated so a rebuilt driver cannot change it silently.
  db.pragma('foreign_keys = ON');
  // int64 ids come back as bigint, never as a rounded number (docs/integer.md).
  db.defaultSafeIntegers(true);
  return db;
}
