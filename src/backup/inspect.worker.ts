/**
 * Runs inspectStoreFile on a worker thread: PRAGMA integrity_check and the count read the whole copy, which on a
 * large store takes long enough that, on the service's own thread, it would hold every request for that time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadMigrations } from '../db/migrate';
import { BackupError, inspectStoreFile } from './store-file';

const { file, label } = workerData as { file: string; label: string };
try {
  parentPort?.postMessage({ ok: true, facts: inspectStoreFile(file, loadMigrations(), label) });
} catch (error) {
  parentPort?.postMessage({ ok: false, message: (error as Error).message, refusal: error instanceof BackupError });
}
