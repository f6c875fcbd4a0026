/**
 * Runs inspectStoreFile and the SHA-256 of the result on a worker thread: PRAGMA integrity_check, the count and
 * the hash read the whole copy, which on a large store takes long enough that, on the service's own thread, it
 * would hold every request for that time.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readlinkSync, readSync } from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { loadMigrations } from '../db/migrate.sqlite';
import { BackupError, inspectStoreFile } from './store-file';

// On Linux the nice value belongs to the thread (setpriority(2)): this thread yields the CPU to the one serving
// requests when they share a core. Elsewhere it runs at normal priority.
try {
  os.setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), 10);
} catch {
  // No /proc/thread-self, or not permitted.
}

function sha256Sync(file: string): { sha256: string; bytes: number } {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(1024 * 1024);
  const fd = openSync(file, 'r');
  let bytes = 0;
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      hash.update(buffer.subarray(0, read));
      bytes += read;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), bytes };
}

const { file, label } = workerData as { file: string; label: string };
try {
  const facts = inspectStoreFile(file, loadMigrations(), label);
  parentPort?.postMessage({ ok: true, facts: { ...facts, ...sha256Sync(file) } });
} catch (error) {
  parentPort?.postMessage({ ok: false, message: (error as Error).message, refusal: error instanceof BackupError });
}
