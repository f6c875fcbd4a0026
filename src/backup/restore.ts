/**
 * Puts a backup in place of a SQLite store that no process has open: the backup is checked against its sidecar
 * (size, SHA-256), copied beside the store, checked again there (integrity, migration level not newer than this
 * build, plant count), migrated, given its restore mark, and swapped in; the store it replaces keeps its bytes
 * under a dated name. It must never replace a file a running service has open, and the restored store must never
 * hand out a position (an event's id, a plant's version and so its ETag) that the replaced store handed out.
 */
import { constants, existsSync } from 'node:fs';
import { copyFile, mkdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations, migrate } from '../db/migrate.sqlite';
import { fileStamp, fsyncPath, removeStaleTemporaries, removeWithCompanions, sha256File, temporaryName } from './files';
import { lastPosition, markPositions } from './restore-mark';
import { readSidecar } from './sidecar';
import { BackupError, inspectStoreFile } from './store-file';

export type RestoreResult = {
  from: string;
  target: string;
  plants: number;
  migration: string | null;
  sha256: string;
  /** Where the store that was at the target now is; undefined when there was none. */
  replaced: string | undefined;
};

export async function restoreStore(from: string, target: string, now: () => Date = () => new Date()): Promise<RestoreResult> {
  const source = path.resolve(from);
  const store = path.resolve(target);
  if (!existsSync(source)) throw new BackupError(`no backup at ${source}`);
  const sidecar = await readSidecar(source);
  const { size } = await stat(source);
  if (size !== sidecar.bytes) {
    throw new BackupError(`${source} has ${size} bytes where its sidecar says ${sidecar.bytes}: the file is truncated or was changed; nothing was restored`);
  }
  const sha256 = await sha256File(source);
  if (sha256 !== sidecar.sha256) {
    throw new BackupError(
      `${source} does not match the SHA-256 in its sidecar (${sha256.slice(0, 12)}…, expected ${sidecar.sha256.slice(0, 12)}…): ` +
        'the file is damaged or was changed; nothing was restored',
    );
  }
  const dir = path.dirname(store);
  await mkdir(dir, { recursive: true });
  await removeStaleTemporaries(dir);
  const temp = temporaryName(dir, 'restore.db');
  try {
    await copyFile(source, temp, constants.COPYFILE_EXCL);
    const facts = inspectStoreFile(temp, loadMigrations(), source);
    if (facts.plants !== sidecar.plants) {
      throw new BackupError(`${source} holds ${facts.plants} plants where its sidecar says ${sidecar.plants}; nothing was restored`);
    }
    const replaced = await swapIn(temp, store, now);
    await fsyncPath(dir);
    return { from: source, target: store, plants: facts.plants, migration: facts.migration, sha256, replaced };
  } catch (error) {
    await removeWithCompanions(temp).catch(() => undefined);
    throw error;
  }
}

async function swapIn(temp: string, store: string, now: () => Date): Promise<string | undefined> {
  const lock = lockIdleStore(store);
  try {
    markRestore(temp, lock === undefined ? 0n : handedOut(lock), now());
    await fsyncPath(temp);
    const replaced = lock === undefined ? undefined : `${store}.replaced-${fileStamp(now())}`;
    if (replaced !== undefined) await rename(store, replaced);
    await rename(temp, store);
    return replaced;
  } finally {
    lock?.close();
  }
}

/**
 * How restore knows no service uses the store: it takes the file's exclusive lock. A connection in WAL mode holds
 * a shared lock on the database file for as long as it is open (https://www.sqlite.org/wal.html, "Sometimes
 * Queries Return SQLITE_BUSY In WAL Mode"; https://www.sqlite.org/lockingv3.html), so a running service — or a
 * backup reading it — makes the change of journal mode below fail with SQLITE_BUSY at once. In exclusive locking
 * mode the lock is kept until close, across the swap, so a service starting meanwhile waits on it instead of
 * opening the file being replaced. The change to a rollback journal also checkpoints the WAL, so the file kept
 * under the dated name holds every commit and nothing is left beside it.
 */
function lockIdleStore(store: string): Database.Database | undefined {
  if (!existsSync(store)) {
    const leftovers = [`${store}-wal`, `${store}-shm`, `${store}-journal`].filter((name) => existsSync(name));
    if (leftovers.length > 0) {
      throw new BackupError(`${leftovers.join(' and ')} remain without ${store}: move them away first, so they are not mistaken for parts of the restored store`);
    }
    return undefined;
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(store, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = DELETE');
    return db;
  } catch (error) {
    db?.close();
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new BackupError(`${store} is in use: another process has it open (a running service, or a backup of it); stop the service, then restore`);
    }
    throw new BackupError(`${store} cannot be locked for the restore (${String(code)}: ${(error as Error).message}); nothing was restored`);
  }
}

/** The last position the replaced store handed out; 0 when it has none (a store from before the change feed). */
function handedOut(db: Database.Database): bigint {
  try {
    return lastPosition(db);
  } catch (error) {
    // A store from before the change feed has no sqlite_sequence: it handed out no position.
    if ((error as { code?: unknown }).code === 'SQLITE_ERROR') return 0n;
    throw error;
  }
}

/** Brings the copy to this build's migrations (the restore table is the latest's) and gives it its restore mark. */
function markRestore(file: string, replacedLast: bigint, at: Date): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    migrate(db, loadMigrations());
    db.transaction(() => markPositions(db, replacedLast, at)).immediate();
  } finally {
    db.close();
  }
}
