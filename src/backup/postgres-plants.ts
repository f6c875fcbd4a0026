/**
 * Export from and import into PostgreSQL, on connections of their own: the connections and transactions around
 * the plant half (src/plants/plant.transfer.postgres.ts). The export reads one REPEATABLE READ snapshot; the
 * import is one transaction (the migrations run first, as the service runs them, and stay applied), so it lands
 * whole or not at all; each plant it creates gets its plant.created change event in that transaction, and no webhook.
 */
import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import { connectionConfig, type PostgresOptions } from '../db/postgres';
import type { NewPlant } from '../plants/plant.schemas';
import type { ImportResult, PlantExport } from '../plants/plant.transfer';
import { exportPlantsPostgres, importPlantsPostgres } from '../plants/plant.transfer.postgres';
import { parsePlantLine } from './plant-lines';

async function connect(options: PostgresOptions): Promise<pg.Client> {
  const client = new pg.Client(connectionConfig(options, false));
  client.on('error', () => {
    // A connection lost mid-run fails the pending query, which rejects to the caller.
  });
  await client.connect();
  return client;
}

export async function exportPostgres(options: PostgresOptions): Promise<PlantExport> {
  const client = await connect(options);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    return await exportPlantsPostgres(client, () => client.end());
  } catch (error) {
    await client.end();
    throw error;
  }
}

async function* parsed(lines: AsyncIterable<[string, number]>): AsyncGenerator<[NewPlant, number]> {
  for await (const [text, line] of lines) yield [parsePlantLine(text, line), line];
}

export async function importPostgres(options: PostgresOptions, lines: AsyncIterable<[string, number]>): Promise<ImportResult> {
  await migratePostgres(options, loadPostgresMigrations());
  const client = await connect(options);
  try {
    await client.query('BEGIN');
    const result = await importPlantsPostgres(client, parsed(lines), Date.now());
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
