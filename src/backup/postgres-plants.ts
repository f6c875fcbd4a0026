/**
 * Export from and import into PostgreSQL, on connections of their own. The export reads one REPEATABLE READ
 * snapshot in id order; the import is one transaction (the migrations run first, as the service runs them, and
 * stay applied), a page of rows per statement, so it lands whole or not at all.
 */
import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import { connectionConfig, type PostgresOptions } from '../db/postgres';
import { conflictMessage, ImportError, parsePlantLine, plantLine, type PlantRow } from './plant-lines';
import { PAGE_ROWS, type ImportResult, type PlantExport } from './plant-transfer';
import type { NewPlant } from '../plants/plant.schemas';

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
    const { rows } = await client.query<{ total: bigint }>('SELECT count(*) AS total FROM plants');
    return {
      total: Number(rows[0]?.total ?? 0n),
      chunks: async function* () {
        try {
          let after: bigint | undefined;
          for (;;) {
            const page = await client.query<PlantRow>(
              after === undefined
                ? 'SELECT id, name, tag FROM plants ORDER BY id LIMIT $1'
                : 'SELECT id, name, tag FROM plants WHERE id > $2 ORDER BY id LIMIT $1',
              after === undefined ? [PAGE_ROWS] : [PAGE_ROWS, after.toString()],
            );
            if (page.rows.length === 0) break;
            yield page.rows.map(plantLine).join('');
            if (page.rows.length < PAGE_ROWS) break;
            after = (page.rows.at(-1) as PlantRow).id;
          }
          await client.query('COMMIT');
        } finally {
          await client.end();
        }
      },
    };
  } catch (error) {
    await client.end();
    throw error;
  }
}

type Pending = { plant: NewPlant; line: number };

// The first line of the page whose id is stored with other fields: earlier pages are already in the table.
const CONFLICT_SQL = `
  SELECT i.line, p.name, p.tag
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[]) AS i(id, name, tag, line)
  JOIN plants p ON p.id = i.id
  WHERE p.name <> i.name OR p.tag IS DISTINCT FROM i.tag
  ORDER BY i.line
  LIMIT 1`;
const INSERT_SQL = `
  INSERT INTO plants (id, name, tag)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
  ON CONFLICT (id) DO NOTHING`;

export async function importPostgres(options: PostgresOptions, lines: AsyncIterable<[string, number]>): Promise<ImportResult> {
  await migratePostgres(options, loadPostgresMigrations());
  const client = await connect(options);
  let read = 0;
  let inserted = 0;
  const flush = async (page: Pending[]): Promise<void> => {
    // Ids repeated within the page: the table cannot tell them apart yet, so they are compared here.
    const firstOfId = new Map<bigint, Pending>();
    const unique: Pending[] = [];
    let repeated: { entry: Pending; earlier: Pending } | undefined;
    for (const entry of page) {
      const earlier = firstOfId.get(entry.plant.id);
      if (earlier === undefined) {
        firstOfId.set(entry.plant.id, entry);
        unique.push(entry);
      } else if (repeated === undefined && (earlier.plant.name !== entry.plant.name || (earlier.plant.tag ?? null) !== (entry.plant.tag ?? null))) {
        repeated = { entry, earlier };
      }
    }
    const ids = unique.map((entry) => entry.plant.id.toString());
    const names = unique.map((entry) => entry.plant.name);
    const tags = unique.map((entry) => entry.plant.tag ?? null);
    const conflict = await client.query<{ line: number; name: string; tag: string | null }>(CONFLICT_SQL, [ids, names, tags, unique.map((entry) => entry.line)]);
    const found = conflict.rows[0];
    // The earliest faulty line of the page, whether it differs from the table or from a line above it.
    if (found !== undefined && (repeated === undefined || found.line < repeated.entry.line)) {
      const entry = unique.find((candidate) => candidate.line === found.line) as Pending;
      throw new ImportError(conflictMessage(entry.line, entry.plant, found));
    }
    if (repeated !== undefined) {
      const { entry, earlier } = repeated;
      throw new ImportError(conflictMessage(entry.line, entry.plant, { name: earlier.plant.name, tag: earlier.plant.tag ?? null }));
    }
    inserted += (await client.query(INSERT_SQL, [ids, names, tags])).rowCount ?? 0;
  };
  try {
    await client.query('BEGIN');
    const count = async () => Number((await client.query<{ n: bigint }>('SELECT count(*) AS n FROM plants')).rows[0]?.n ?? 0n);
    const before = await count();
    let page: Pending[] = [];
    try {
      for await (const [text, line] of lines) {
        page.push({ plant: parsePlantLine(text, line), line });
        read += 1;
        if (page.length === PAGE_ROWS) {
          await flush(page);
          page = [];
        }
      }
    } catch (error) {
      // A malformed line stops the import, but a conflict on an earlier line of the page is the first fault.
      if (error instanceof ImportError && page.length > 0) await flush(page);
      throw error;
    }
    await flush(page);
    const after = await count();
    if (after !== before + inserted) throw new ImportError(`PostgreSQL holds ${after} plants after the import, expected ${before + inserted}; nothing was imported`);
    await client.query('COMMIT');
    return { lines: read, inserted, unchanged: read - inserted, before, after };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
