// The store: which database, and how long a request may wait on it.
import { integer, databaseUrl, type Parsed } from './fields';
import { ConfigError } from './config-error';

export const storeVariables = {
  DATABASE_URL: databaseUrl.prefault('file:./data/plants.db').describe(
    '`file:<path>` names the SQLite file (its directory is created when missing; a relative path is from the working directory). `postgres://user:password@host:5432/database` (or `postgresql://`) uses PostgreSQL instead, for several replicas.',
  ),
  DATABASE_BUSY_TIMEOUT_MS: integer(0, 60_000).prefault('2000').describe(
    'SQLite: how long a write keeps retrying (on timers, never blocking) while another process holds the lock, before 503 (milliseconds).',
  ),
  DATABASE_POOL_SIZE: integer(1, 1000).prefault('10').describe(
    'PostgreSQL: connections this replica keeps at most. At `WORKERS` above 1 each worker keeps its share, max(2, ⌈this ÷ WORKERS⌉).',
  ),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(100, 600_000).prefault('5000').describe(
    'PostgreSQL: the longest a request waits on the database, a connection and then its statement, before 503 (milliseconds).',
  ),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000).prefault('2000').describe(
    'PostgreSQL: the longest one connection attempt may take (milliseconds); less than `DATABASE_STATEMENT_TIMEOUT_MS`.',
  ),
};

export function storeSettings(env: Parsed<typeof storeVariables>) {
  // A request waits for a connection, then for its statement, and must be answered within the statement timeout.
  if (env.DATABASE_CONNECT_TIMEOUT_MS >= env.DATABASE_STATEMENT_TIMEOUT_MS) {
    throw new ConfigError('DATABASE_CONNECT_TIMEOUT_MS must be less than DATABASE_STATEMENT_TIMEOUT_MS');
  }
  return {
    database: env.DATABASE_URL,
    databaseBusyTimeoutMs: env.DATABASE_BUSY_TIMEOUT_MS,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseConnectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
  };
}
