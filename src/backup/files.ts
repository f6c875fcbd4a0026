/**
 * File steps the backup and the restore share: checksums, fsync of a file and of its directory, the temporary
 * names both write under, and the removal of temporaries a killed run left behind. Never touches a store
 * a service has open.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { BackupError } from './store-file';

/** Every temporary file starts with this, then the writer's pid: the next run in the directory removes a dead writer's. */
export const TEMP_PREFIX = '.plant-store-tmp-';

export function temporaryName(dir: string, purpose: string): string {
  return path.join(dir, `${TEMP_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-${purpose}`);
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** fsync of a file, or of a directory so that a rename or unlink in it survives a power loss (rename(2) alone does not). */
export async function fsyncPath(target: string): Promise<void> {
  const handle = await open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temporaries of writers that are gone (a backup or restore killed midway); returns their names. */
export async function removeStaleTemporaries(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const stale = names.filter((name) => {
    if (!name.startsWith(TEMP_PREFIX)) return false;
    const pid = Number.parseInt(name.slice(TEMP_PREFIX.length), 10);
    return Number.isInteger(pid) && pid > 0 && !isAlive(pid);
  });
  await Promise.all(stale.map((name) => rm(path.join(dir, name), { force: true })));
  return stale;
}

/** The files SQLite keeps beside a database <name>: <name>-journal, <name>-wal, <name>-shm. */
const COMPANION_SUFFIXES = ['-journal', '-wal', '-shm'] as const;

/** A SQLite file with the files SQLite may keep beside it. */
export const withCompanions = (file: string): string[] => [file, ...COMPANION_SUFFIXES.map((suffix) => `${file}${suffix}`)];

// The companions, and a multi-database commit's super-journal (<name>-mjXXXXXX9XX, sqlite3.c vdbeCommit). Any
// case: on a case-insensitive disk (macOS, Windows) b.db-WAL is the file SQLite opens as b.db-wal.
const COMPANION_NAME = new RegExp(`(${COMPANION_SUFFIXES.join('|')}|-mj[0-9A-F]{6}9[0-9A-F]{2})$`, 'i');

/**
 * Refuses a name SQLite could claim as the companion of a database of the base name: opening that database
 * deletes or rolls back a "hot journal" it does not recognise, and resets a WAL or WAL index, so a file written
 * under such a name can vanish or corrupt that database. Any base name, not only the store's: a backup b.db's
 * own journal is b.db-journal.
 */
export function refuseCompanionName(file: string): void {
  const suffix = COMPANION_NAME.exec(path.basename(file))?.[1];
  if (suffix === undefined) return;
  throw new BackupError(
    `${file} ends in ${suffix}, a name SQLite gives a file it keeps beside a database; opening ` +
      `${file.slice(0, -suffix.length)} would take it for that database's own and delete or overwrite it: a backup ` +
      'never takes a name ending in -journal, -wal, -shm or -mj…; give it another name',
  );
}

export async function removeWithCompanions(file: string): Promise<void> {
  await Promise.all(withCompanions(file).map((name) => rm(name, { force: true })));
}

/** 2026-11-23T08-15-00-123Z: sorts by time, and is a valid file name everywhere. */
export const fileStamp = (date: Date): string => date.toISOString().replace(/[:.]/g, '-');
