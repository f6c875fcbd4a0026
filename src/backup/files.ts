/**
 * File steps the backup and the restore share: checksums, fsync of a file and of its directory, the temporary
 * names both write under, and the removal of temporaries a killed run left behind. Never touches a store
 * a service has open.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

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

/** A SQLite file with the files SQLite may keep beside it. */
export const withCompanions = (file: string): string[] => [file, `${file}-journal`, `${file}-wal`, `${file}-shm`];

export async function removeWithCompanions(file: string): Promise<void> {
  await Promise.all(withCompanions(file).map((name) => rm(name, { force: true })));
}

/** 2026-11-23T08-15-00-123Z: sorts by time, and is a valid file name everywhere. */
export const fileStamp = (date: Date): string => date.toISOString().replace(/[:.]/g, '-');
