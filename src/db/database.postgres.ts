import pg from 'pg';
import type { Logger } from '../logger';

export type PgPool = pg.Pool;

export type PostgresOptions = {
  url: string;
  poolSize: number;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
};

// int8 (oid 20) as bigint: pg's default hands it over as a string, and Number() would round past 2^53.
const INT8_OID = 20;
const parseInt8 = (value: string): bigint => BigInt(value);
const getTypeParser = (oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) =>
  oid === INT8_OID && format !== 'binary' ? parseInt8 : (pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown);
const types = { getTypeParser: getTypeParser as typeof pg.types.getTypeParser };

/** Connection settings for the service's sessions; the migration runner reuses them without the statement timeout. */
export function connectionConfig(options: PostgresOptions, statementTimeout: boolean): pg.ClientConfig {
  return {
    connectionString: options.url,
    types,
    connectionTimeoutMillis: options.connectTimeoutMs,
    // A 200 promises a committed, flushed row: set it for our sessions rather than trust the server's default.
    options: '-c synchronous_commit=on',
    application_name: 'plant-store',
    ...(statementTimeout
      ? {
          // The server cancels a statement past the limit; the client gives up too when the server cannot answer.
          statement_timeout: options.statementTimeoutMs,
          query_timeout: options.statementTimeoutMs,
        }
      : {}),
    keepAlive: true,
  };
}

/**
 * The pool every request uses. It connects lazily: creating it never fails, so the process starts and answers
 * /healthz with PostgreSQL away. Broken connections leave the pool on their own; new ones are made on demand.
 */
export function createPostgresPool(options: PostgresOptions, logger: Logger): PgPool {
  const pool = new pg.Pool({
    ...connectionConfig(options, true),
    max: options.poolSize,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection that dies (server restart, network cut) emits here; unhandled it would end the process.
  pool.on('error', (err) => logger.debug({ err }, 'idle PostgreSQL connection lost'));
  return pool;
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable)';
  }
}
