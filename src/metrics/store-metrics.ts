import { Counter, Histogram, type Registry } from 'prom-client';
import type { StoreObserver } from '../observers';

const COMMIT_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH_ROWS_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

// A PostgreSQL SQLSTATE: five characters, of which the first two are the class. No class starts with E, so an
// errno (EPIPE) is never read as one.
const SQLSTATE = /^[0-9A-DF-Z][0-9A-Z]{4}$/;

/**
 * The driver's code: SQLITE_BUSY, …; PostgreSQL's SQLSTATE by class (SQLSTATE_57 operator intervention, which holds
 * the statement timeout; SQLSTATE_08 connection; SQLSTATE_53 resources; …), so the label stays a short list; an
 * errno (ECONNREFUSED, ETIMEDOUT, …) as it is.
 */
function storeErrorKind(error: unknown): string {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  if (typeof code === 'string') return SQLSTATE.test(code) ? `SQLSTATE_${code.slice(0, 2)}` : code;
  return typeof name === 'string' ? name : 'unknown';
}

/** The store's instruments: rows and time per group commit, and the commits that failed, fed through the observer. */
export function storeMetrics(registers: Registry[]): StoreObserver {
  const batchRows = new Histogram({
    name: 'plants_store_commit_batch_rows',
    help: 'Rows per group commit (creates that shared one transaction and one fsync).',
    buckets: BATCH_ROWS_BUCKETS,
    registers,
  });
  const commitSeconds = new Histogram({
    name: 'plants_store_commit_duration_seconds',
    help: 'Time of one group commit, transaction and fsync, in seconds.',
    buckets: COMMIT_SECONDS_BUCKETS,
    registers,
  });
  const storeErrors = new Counter({
    name: 'plants_store_errors_total',
    help: 'Commits the store failed as a whole, by driver error code (SQLITE_BUSY, SQLITE_FULL, …).',
    labelNames: ['kind'] as const,
    registers,
  });
  return {
    committed: (rows, seconds) => {
      batchRows.observe(rows);
      commitSeconds.observe(seconds);
    },
    failed: (error) => storeErrors.inc({ kind: storeErrorKind(error) }),
  };
}
