/**
 * The plant half of export and import on PostgreSQL, on the connection and in the transaction src/backup opened
 * for them. The export pages through the snapshot in (tenant, id) order, each row with its tenant (the line names
 * it, plant.transfer.ts); the import puts each page of plants, each line in its own tenant, through the API's write path (plant.write.postgres.ts: read, decide, write the plants and their change events), with no
 * webhook, so an imported plant gets its version and event by the same code as a created one. SQL only; no files.
 */
import { SHARED_TENANT, type TenantKey } from '../tenant';
import type pg from 'pg';
import { ImportError, type Export, type ImportResult, type Lines } from '../transfer';
import { applyWrites, type Applied } from './plant.write.postgres';
import { plantLine } from './plant.json';
import { selectMembers } from './plant.members';
import { conflictMessage, PAGE_ROWS, plantsOf, type ImportedPlant, type PlantRow } from './plant.transfer';

// Every tenant's plants (an export is the store's), a page at a time from the last (tenant, id) read.
const FIRST_PAGE = `SELECT tenant, id, ${selectMembers()} FROM plants ORDER BY tenant, id LIMIT $1`;
const NEXT_PAGE = `SELECT tenant, id, ${selectMembers()} FROM plants WHERE (tenant, id) > ($2, $3) ORDER BY tenant, id LIMIT $1`;

/** An export row: the plant and the key of its tenant. */
type TenantRow = PlantRow & { tenant: TenantKey };

/** The plants of the snapshot `client` holds open (a REPEATABLE READ transaction), a page at a time; `close` runs when the pages end. */
export async function exportPlantsPostgres(client: pg.ClientBase, close: () => Promise<void>): Promise<Export> {
  const { rows } = await client.query<{ total: bigint }>('SELECT count(*) AS total FROM plants');
  return {
    total: Number(rows[0]?.total ?? 0n),
    chunks: async function* () {
      try {
        let after: TenantRow | undefined;
        for (;;) {
          const page = await client.query<TenantRow>(
            after === undefined ? FIRST_PAGE : NEXT_PAGE,
            after === undefined ? [PAGE_ROWS] : [PAGE_ROWS, after.tenant, after.id.toString()],
          );
          if (page.rows.length === 0) break;
          yield page.rows.map(plantLine).join('');
          if (page.rows.length < PAGE_ROWS) break;
          after = page.rows.at(-1);
        }
        await client.query('COMMIT');
      } finally {
        await close();
      }
    },
  };
}

/** A line's plant and the key of its tenant (the shared one when the line names none). */
type Pending = ImportedPlant & { tenant?: TenantKey; line: number };

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
async function writePage(client: pg.ClientBase, page: Pending[], at: number, defaultTenant: string | undefined): Promise<number> {
  if (page.length === 0) return 0;
  // A line of TENANT_DEFAULT's tenant goes to the shared tenant, as a request of it would (src/tenant.ts).
  const keyOf = (tenant: TenantKey | undefined) => (tenant === undefined || tenant === defaultTenant ? SHARED_TENANT : tenant);
  const { applied, changed } = await applyWrites(client, page.map(({ plant, stamps, tenant }) => ({ write: { kind: 'create', plant, stamps }, tenant: keyOf(tenant) })), at);
  // Creates alone, no unit: every answer is an Applied.
  const answers = applied as Applied[];
  const index = answers.findIndex(({ decision }) => decision.outcome === 'conflict');
  const conflict = answers[index]?.decision;
  if (conflict !== undefined && 'current' in conflict) {
    const { line, plant, tenant } = page[index] as Pending;
    // The stored plant as an export writes its line, its tenant named.
    const stored = { ...conflict.current, tenant: keyOf(tenant) };
    throw new ImportError(conflictMessage(line, plant, stored));
  }
  return changed;
}

/**
 * Creates the plant of each line not yet stored, in the caller's transaction, a page (PAGE_ROWS) per batch; a plant stored
 * the same is left as it is, one stored otherwise stops the import (ImportError, the transaction is the caller's
 * to roll back). A line that fails to parse is reported after the lines above it are written, so an earlier
 * conflict is the fault named. The counts are checked before answering. `defaultTenant`: the target's TENANT_DEFAULT,
 * whose lines go to the shared tenant.
 */
export async function importPlantsPostgres(client: pg.ClientBase, lines: Lines, at: number, defaultTenant?: string): Promise<ImportResult> {
  const lastPos = (await client.query<{ last_pos: bigint }>(LOCK_COUNTER_SQL, [at])).rows[0]?.last_pos ?? 0n;
  if (BigInt(lastPos) === 0n) await client.query(MARK_SQL, [at]);
  const count = async () => Number((await client.query<{ n: bigint }>('SELECT count(*) AS n FROM plants')).rows[0]?.n ?? 0n);
  const before = await count();
  let read = 0;
  let inserted = 0;
  let page: Pending[] = [];
  // One page in flight while the next is parsed: PostgreSQL's work and ours overlap.
  let flushing: Promise<void> = Promise.resolve();
  const flush = async (pending: Pending[]): Promise<void> => {
    inserted += await writePage(client, pending, at, defaultTenant);
  };
  try {
    for await (const [imported, line] of plantsOf(lines)) {
      page.push({ ...imported, line });
      read += 1;
      if (page.length === PAGE_ROWS) {
        await flushing;
        flushing = flush(page);
        // Handled where it is awaited; this only keeps a rejection meanwhile from counting as unhandled.
        flushing.catch(() => undefined);
        page = [];
      }
    }
  } finally {
    // Also when a line failed to parse: a conflict on an earlier line is the first fault, not that one.
    await flushing;
    await flush(page);
  }
  const after = await count();
  if (after !== before + inserted) throw new ImportError(`PostgreSQL holds ${after} plants after the import, expected ${before + inserted}; nothing was imported`);
  return { lines: read, inserted, unchanged: read - inserted, before, after };
}

/** The plant half of a PostgreSQL transfer, handed to src/backup by its caller. */
export const postgresPlantTransfer = { export: exportPlantsPostgres, import: importPlantsPostgres };
