import { AppError } from '../errors';
import type { PgPool } from './database.postgres';

/**
 * What /readyz asks PostgreSQL beyond the migrations: can a write commit on a session of the pool. One round
 * trip that reads a setting and takes no lock, since orchestrators probe often. `transaction_read_only` is on
 * for a session of a hot standby and under `default_transaction_read_only=on` (set for the server, the database
 * or the role), the two ways a PostgreSQL that answers still refuses every write.
 *
 * A held lock on the plants table is not unreadiness: it is another session at work, shared by every replica,
 * and taking them all out of rotation would turn a wait into an outage; writes wait for it at most
 * DATABASE_STATEMENT_TIMEOUT_MS and then answer 503 with Retry-After. This check never waits for that lock.
 */
export async function assertWritable(pool: PgPool): Promise<void> {
  const { rows } = await pool.query<{ read_only: string }>("SELECT current_setting('transaction_read_only') AS read_only");
  if (rows[0]?.read_only === 'on') throw new AppError('store_unavailable', 'The store is read-only; it cannot take writes.');
}

// SQLSTATE classes and codes that say "not now" rather than "bug": 08 connection exception, 53 insufficient
// resources, 57 operator intervention (admin shutdown, cannot connect now, statement timeout), 40001 and 40P01
// (serialization failure, deadlock), 25006 (read-only transaction: a replica or a failover in progress).
const UNAVAILABLE_SQLSTATE = /^(08|53|57|40001|40P01|25006)/;
// Errors node-postgres raises itself, with no SQLSTATE: the socket, the connect timeout, the query timeout.
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/** A driver error that means PostgreSQL cannot be reached or cannot work now, as opposed to a bug. */
export function isUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}
