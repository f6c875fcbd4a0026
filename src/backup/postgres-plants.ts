/**
 * Export from and import into PostgreSQL, on connections of their own. The export reads one REPEATABLE READ
 * snapshot in id order; the import is one transaction (the migrations run first, as the service runs them, and
 * stay applied), a page of rows per statement, so it lands whole or not at all. Each plant it inserts gets its
 * plant.created change event in the same statement, with a position from the feed's counter, and no webhook.
 */
import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../db/migrate.postgres';
import { connectionConfig, type PostgresOptions } from '../db/postgres';
import { plantLine } from '../plants/plant.json';
import { parsePlantLine } from './plant-lines';
import { conflictMessage, ImportError, PAGE_ROWS, type ImportResult, type PlantExport, type PlantRow } from '../plants/plant.transfer';
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
// A page in one statement: the plants not stored yet, each with its plant.created event, numbered after $4 in
// line order; the ids that were not inserted were stored already and are compared next. The counter row lock
// keeps every other writer of plants out (they all take it first), so NOT EXISTS cannot race an insert.
const INSERT_SQL = `
  WITH input AS (
    SELECT u.id, u.name, u.tag, u.ord FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS u(id, name, tag, ord)
  ), fresh AS MATERIALIZED (
    SELECT i.id, i.name, i.tag, $4::bigint + row_number() OVER (ORDER BY i.ord) AS pos
    FROM input i WHERE NOT EXISTS (SELECT 1 FROM plants p WHERE p.id = i.id)
  ), stored AS (
    INSERT INTO plants (id, name, tag, version) SELECT id, name, tag, pos FROM fresh RETURNING id
  ), events AS (
    INSERT INTO plant_events (pos, kind, plant_id, name, tag, at) SELECT pos, 'created', id, name, tag, $5::bigint FROM fresh
  )
  SELECT id FROM stored`;
// A store that never handed out a position is being filled from another one (a restore from an export, a move
// between stores): like a restored one, it continues past a restore mark (migrations/postgres/007).
const MARK_SQL = 'SELECT plant_positions_mark($1) AS pos';
// Writes the counter back and wakes the feed of every replica, both when the transaction commits.
const ADVANCE_COUNTER_SQL = "WITH advanced AS (UPDATE plant_event_counter SET last_pos = $1) SELECT pg_notify('plant_events', $1::text)";
const STORED_SQL = 'SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])';

const differs = (plant: NewPlant, stored: { name: string; tag: string | null }) => stored.name !== plant.name || stored.tag !== (plant.tag ?? null);

type Fault = { entry: Pending; stored: { name: string; tag: string | null } };

// Ids repeated within the page: the statement cannot tell them apart, so they are compared here.
function firstOfEachId(page: Pending[]): { unique: Pending[]; faults: Fault[] } {
  const firstOfId = new Map<bigint, Pending>();
  const unique: Pending[] = [];
  const faults: Fault[] = [];
  for (const entry of page) {
    const earlier = firstOfId.get(entry.plant.id);
    if (earlier === undefined) {
      firstOfId.set(entry.plant.id, entry);
      unique.push(entry);
    } else if (faults.length === 0 && differs(entry.plant, { name: earlier.plant.name, tag: earlier.plant.tag ?? null })) {
      faults.push({ entry, stored: { name: earlier.plant.name, tag: earlier.plant.tag ?? null } });
    }
  }
  return { unique, faults };
}

/** Writes one page with positions after `lastPos`: answers how many plants it inserted, or throws its earliest conflict. */
async function writePage(client: pg.Client, page: Pending[], lastPos: bigint, at: number): Promise<number> {
  if (page.length === 0) return 0;
  const { unique, faults } = firstOfEachId(page);
  const ids = unique.map((entry) => entry.plant.id.toString());
  const created = await client.query<{ id: bigint }>(INSERT_SQL, [
    ids,
    unique.map((entry) => entry.plant.name),
    unique.map((entry) => entry.plant.tag ?? null),
    lastPos.toString(),
    at,
  ]);
  const createdIds = new Set(created.rows.map((row) => row.id));
  const already = unique.filter((entry) => !createdIds.has(entry.plant.id));
  if (already.length > 0) {
    const stored = await client.query<PlantRow>(STORED_SQL, [already.map((entry) => entry.plant.id.toString())]);
    const byId = new Map(stored.rows.map((row) => [row.id, row]));
    const first = already.find((entry) => {
      const row = byId.get(entry.plant.id);
      return row !== undefined && differs(entry.plant, row);
    });
    if (first !== undefined) faults.push({ entry: first, stored: byId.get(first.plant.id) as PlantRow });
  }
  // The earliest faulty line of the page, whether it differs from the table or from a line above it.
  const fault = faults.sort((x, y) => x.entry.line - y.entry.line)[0];
  if (fault !== undefined) throw new ImportError(conflictMessage(fault.entry.line, fault.entry.plant, fault.stored));
  return created.rows.length;
}

export async function importPostgres(options: PostgresOptions, lines: AsyncIterable<[string, number]>): Promise<ImportResult> {
  await migratePostgres(options, loadPostgresMigrations());
  const client = await connect(options);
  let read = 0;
  let inserted = 0;
  let lastPos = 0n;
  const at = Date.now();
  const flush = async (page: Pending[]): Promise<void> => {
    const count = await writePage(client, page, lastPos, at);
    inserted += count;
    lastPos += BigInt(count);
  };
  try {
    await client.query('BEGIN');
    lastPos = (await client.query<{ last_pos: bigint }>(LOCK_COUNTER_SQL, [at])).rows[0]?.last_pos ?? 0n;
    if (lastPos === 0n) lastPos = (await client.query<{ pos: bigint }>(MARK_SQL, [at])).rows[0]?.pos ?? 0n;
    const firstPos = lastPos;
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
    if (lastPos !== firstPos) await client.query(ADVANCE_COUNTER_SQL, [lastPos.toString()]);
    await client.query('COMMIT');
    return { lines: read, inserted, unchanged: read - inserted, before, after };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
