/**
 * The online backup of a SQLite store: SQLite's backup API in steps from a connection of its own, written under a
 * temporary name in the target directory, checked, fsynced, then renamed into place with its sidecar. Used by
 * `plant-store backup` and by the service's scheduled backups. It must never write to the source store.
 */
import { existsSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fsyncPath, refuseCompanionName, removeStaleTemporaries, removeWithCompanions, temporaryName } from './files';
import { sidecarPath, writeSidecar } from './sidecar';
import { BackupError, inspectStoreFileAside } from './store-file';

export type BackupOptions = {
  /**
   * Pages copied per step. In the service each step runs on the event loop, so it bounds how long a request
   * waits behind the backup (100 pages of 4 KiB take about a millisecond); the command runs beside the service
   * in another process and can take larger steps.
   */
  pagesPerStep: number;
  /** How long opening the source may wait on a lock before failing (the same setting as the service's). */
  busyTimeoutMs: number;
  /** Checked between steps and phases: an aborted backup stops, removes its temporary file and rejects. */
  signal?: AbortSignal;
  now?: () => Date;
};

export type BackupResult = {
  file: string;
  sidecar: string;
  bytes: number;
  plants: number;
  migration: string | null;
  sha256: string;
  seconds: number;
  /** Temporaries of earlier runs that were killed midway, removed before this one. */
  removedTemporaries: string[];
};

export async function backupStore(source: string, target: string, options: BackupOptions): Promise<BackupResult> {
  const started = performance.now();
  const now = options.now ?? (() => new Date());
  const file = path.resolve(target);
  refuseCompanionName(file);
  const dir = path.dirname(file);
  if (!existsSync(dir)) throw new BackupError(`the directory ${dir} does not exist`);
  // A backup never replaces another: the name of a finished backup always leads to that backup.
  if (existsSync(file)) throw new BackupError(`${file} exists already; give the backup a new name`);
  if (!existsSync(source)) throw new BackupError(`no SQLite store at ${source}`);
  const removedTemporaries = await removeStaleTemporaries(dir);
  const temp = temporaryName(dir, path.basename(file));
  try {
    await copySnapshot(source, temp, options);
    throwIfStopped(options.signal);
    const { plants, migration, sha256, bytes } = await inspectStoreFileAside(temp, `the copy of ${source}`);
    await fsyncPath(temp);
    throwIfStopped(options.signal);
    const createdAt = now().toISOString();
    const sidecar = await writeSidecar(file, { sha256, bytes, plants, migration, createdAt, source });
    await rename(temp, file);
    await fsyncPath(dir);
    return { file, sidecar, bytes, plants, migration, sha256, seconds: (performance.now() - started) / 1000, removedTemporaries };
  } catch (error) {
    await removeWithCompanions(temp).catch(() => undefined);
    // A sidecar whose backup never got its name would describe nothing.
    if (!existsSync(file)) await removeWithCompanions(sidecarPath(file)).catch(() => undefined);
    throw error;
  }
}

function throwIfStopped(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BackupError('the backup was stopped (the service is shutting down)');
}

/**
 * One consistent snapshot, whatever the service commits meanwhile: the read transaction opened first pins it
 * for every step (in WAL mode a reader never blocks the writer), and sqlite3_backup_step reuses a read
 * transaction the source already has, so the copy never restarts because another connection wrote
 * (https://www.sqlite.org/backup.html, https://www.sqlite.org/c3ref/backup_finish.html). Every commit
 * acknowledged before BEGIN's first read is in the copy.
 */
async function copySnapshot(source: string, temp: string, options: BackupOptions): Promise<void> {
  const db = new Database(source, { fileMustExist: true, timeout: options.busyTimeoutMs });
  try {
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    await db.backup(temp, {
      progress: () => {
        throwIfStopped(options.signal);
        return options.pagesPerStep;
      },
    });
    db.exec('COMMIT');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (error instanceof BackupError || typeof code !== 'string') throw error;
    throw new BackupError(`copying ${source} failed (${code}: ${(error as Error).message})`, { cause: error });
  } finally {
    db.close();
  }
}
