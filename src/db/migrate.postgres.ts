import path from 'node:path';
import pg from 'pg';
import { allApplied, loadDialectMigrations, MIGRATIONS_ROOT, pendingMigrations, type Migration } from './migrations';
import { connectionConfig, type PgPool, type PostgresOptions } from './database.postgres';

export const POSTGRES_MIGRATIONS_DIR = path.join(MIGRATIONS_ROOT, 'postgres');

// One key for every replica of this service on a database: pg_advisory_lock serialises their migration runs.
const MIGRATION_LOCK_KEY = 724_118_305_113n;

export function loadPostgresMigrations(dir: string = POSTGRES_MIGRATIONS_DIR): Migration[] {
  return loadDialectMigrations(dir);
}

async function appliedChecksums(client: pg.ClientBase | PgPool): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations');
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

/**
 * Applies what is pending under an advisory lock, so replicas starting together apply each file once: the
 * others wait, then find it recorded. On its own connection, without the statement timeout (a migration may
 * take long, and so may the wait for another replica's). The lock is the session's: it goes with the connection.
 */
export async function migratePostgres(options: PostgresOptions, migrations: readonly Migration[]): Promise<string[]> {
  const client = new pg.Client(connectionConfig(options, false));
  client.on('error', () => {
    // A connection lost mid-run fails the pending query, which rejects below; nothing more to do here.
  });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name TEXT PRIMARY KEY,
      checksum TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL
    )`);
    const pending = pendingMigrations(migrations, await appliedChecksums(client));
    for (const migration of pending) {
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ($1, $2, now())', [migration.name, migration.checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    return pending.map((migration) => migration.name);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** True when every known migration is recorded as applied; throws when PostgreSQL cannot be read. */
export async function isPostgresMigrated(pool: PgPool, migrations: readonly Migration[]): Promise<boolean> {
  return allApplied(migrations, await appliedChecksums(pool));
}
