/**
 * Export from and import into PostgreSQL, on connections of their own: the connections and transactions around
 * a resource's half (its PostgresTransfer, e.g. src/plants/plant.transfer.postgres.ts). The export reads one
 * REPEATABLE READ snapshot; the import is one transaction (the migrations run first, as the service runs them, and
 * stay applied), so it lands whole or not at all; each record it creates gets its change event in that
 * transaction, and no webhook.
 */
import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import { connectionConfig, type PostgresOptions } from '../db/database.postgres';
import type { Export, ImportResult, Lines } from '../transfer';
import type { PostgresTransfer } from './transfer';

async function connect(options: PostgresOptions): Promise<pg.Client> {
  const client = new pg.Client(connectionConfig(options, false));
  client.on('error', () => {
    // A connection lost mid-run fails the pending query, which rejects to the caller.
  });
  await client.connect();
  return client;
}

export async function exportPostgres(options: PostgresOptions, transfer: PostgresTransfer): Promise<Export> {
  const client = await connect(options);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    return await transfer.export(client, () => client.end());
  } catch (error) {
    await client.end();
    throw error;
  }
}

/** `defaultTenant`: the tenant name (TENANT_DEFAULT) whose lines go to the shared tenant. */
export async function importPostgres(options: PostgresOptions, lines: Lines, transfer: PostgresTransfer, defaultTenant?: string): Promise<ImportResult> {
  await migratePostgres(options, loadPostgresMigrations());
  const client = await connect(options);
  try {
    await client.query('BEGIN');
    const result = await transfer.import(client, lines, Date.now(), defaultTenant);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
