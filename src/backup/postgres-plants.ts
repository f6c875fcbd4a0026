/**
 * Export from and import into PostgreSQL, on connections of their own. The export reads one REPEATABLE READ
 * snapshot in id order; the import is one transaction (the migrations run first, as the service runs them, and
 * stay applied), a page of lines per batch of the service's own write path (plant-change.postgres.ts), so it
 * lands whole or not at all, and each plant it inserts gets its version and plant.created event by the same code
 * as a POST; no webhook.
 */
import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import { connectionConfig, type PostgresOptions } from '../db/postgres';
import { plantLine } from '../plants/plant.json';
import { applyWrites } from '../plants/plant-change.postgres';
import { conflictMessage, ImportError, parsePlantLine, type PlantRow } from './plant-lines';
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

// The feed's counter row (migrations/postgres/005), held from here to the commit: positions are taken as the
// service takes them (moved past a restore's mark first, migrations/postgres/007), so they become visible in the
// order they are numbered, and the service's writes wait.
const LOCK_COUNTER_SQL = 'SELECT plant_positions_take($1) AS last_pos';
// A store that never handed out a position is being filled from another one (a restore from an export, a move
// between stores): like a restored one, it continues past a restore mark (migrations/postgres/007).
const MARK_SQL = 'SELECT plant_positions_mark($1) AS pos';

/**
 * Writes one page through the service's write path (each line a create, decided in line order, so a line
 * repeating an id meets the plant the line above stored): answers how many plants it inserted, or throws the
 * page's earliest conflict.
 */
async function writePage(client: pg.Client, page: Pending[], at: number): Promise<number> {
  if (page.length === 0) return 0;
  const { applied, changed } = await applyWrites(client, page.map(({ plant }) => ({ write: { kind: 'create', plant } })), at);
  const index = applied.findIndex(({ decision }) => decision.outcome === 'conflict');
  const conflict = applied[index]?.decision;
  if (conflict !== undefined && 'current' in conflict) {
    const { line, plant } = page[index] as Pending;
    throw new ImportError(conflictMessage(line, plant, { name: conflict.current.name, tag: conflict.current.tag ?? null }));
  }
  return changed;
}

export async function importPostgres(options: PostgresOptions, lines: AsyncIterable<[string, number]>): Promise<ImportResult> {
  await migratePostgres(options, loadPostgresMigrations());
  const client = await connect(options);
  let read = 0;
  let inserted = 0;
  const at = Date.now();
  const flush = async (page: Pending[]): Promise<void> => {
    inserted += await writePage(client, page, at);
  };
  try {
    await client.query('BEGIN');
    const lastPos = (await client.query<{ last_pos: bigint }>(LOCK_COUNTER_SQL, [at])).rows[0]?.last_pos ?? 0n;
    if (lastPos === 0n) await client.query(MARK_SQL, [at]);
    const count = async () => Number((await client.query<{ n: bigint }>('SELECT count(*) AS n FROM plants')).rows[0]?.n ?? 0n);
    const before = await count();
    let page: Pending[] = [];
    // One page in flight while the next is parsed: PostgreSQL's work and ours overlap.
    let flushing: Promise<void> = Promise.resolve();
    for await (const [text, line] of lines) {
      let plant: NewPlant;
      try {
        plant = parsePlantLine(text, line);
      } catch (error) {
        // A conflict on an earlier line is the first fault, not this one.
        await flushing;
        await flush(page);
        throw error;
      }
      page.push({ plant, line });
      read += 1;
      if (page.length === PAGE_ROWS) {
        await flushing;
        flushing = flush(page);
        // Handled where it is awaited; this only keeps a rejection meanwhile from counting as unhandled.
        flushing.catch(() => undefined);
        page = [];
      }
    }
    await flushing;
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
