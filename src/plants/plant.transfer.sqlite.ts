/**
 * The plant half of export and import on SQLite, on the connection and in the transaction src/backup opened for
 * them. The export pages through the snapshot in (tenant, id) order, the primary key's, each line naming its tenant; the import puts each plant through the API's write path
 * (plant.write.sqlite.ts: read the row, decide, write the plant and its change event), with no webhook, so an
 * imported plant gets its version and event by the same code as a created one. SQL only; no files.
 */
import type { Db } from '../db/database.sqlite';
import { ImportError, type Export, type ImportResult, type Lines } from '../transfer';
import { sqliteChangeApplier } from './plant.write.sqlite';
import { SqliteEventLog } from './plant.events.sqlite';
import { plantLine } from './plant.json';
import { selectMembers } from './plant.members';
import { conflictMessage, PAGE_ROWS, plantsOf, type PlantRow } from './plant.transfer';

/** The plants of the snapshot `db` holds open (a read transaction), a page at a time; `close` runs when the pages end. */
export function exportPlantsSqlite(db: Db, close: () => void): Export {
  const total = Number(db.prepare('SELECT count(*) FROM plants').pluck().get());
  // Every tenant's plants, store-wide on purpose: an export is the whole store, each line naming its tenant.
  const first = db.prepare<[number], PlantRow>(`SELECT tenant, id, ${selectMembers()} FROM plants ORDER BY tenant, id LIMIT ?`);
  const after = db.prepare<[string, bigint, number], PlantRow>(
    `SELECT tenant, id, ${selectMembers()} FROM plants WHERE (tenant, id) > (?, ?) ORDER BY tenant, id LIMIT ?`,
  );
  return {
    total,
    chunks: function* () {
      try {
        let rows = first.all(PAGE_ROWS);
        while (rows.length > 0) {
          yield rows.map(plantLine).join('');
          const last = rows.at(-1) as PlantRow;
          rows = rows.length < PAGE_ROWS ? [] : after.all(last.tenant ?? '', last.id, PAGE_ROWS);
        }
      } finally {
        close();
      }
    },
  };
}

/**
 * Creates the plant of each line not yet stored, in the tenant it names (`defaultTenant`: the name whose lines
 * go to the shared tenant, TENANT_DEFAULT), in the caller's write transaction, its events numbered after `lastPos` and
 * written at `at`; a plant stored the same is left as it is, one stored otherwise stops the import (ImportError,
 * the transaction is the caller's to roll back). The counts are checked before answering.
 */
export async function importPlantsSqlite(db: Db, lines: Lines, lastPos: bigint, at: number, defaultTenant?: string): Promise<ImportResult> {
  const count = db.prepare('SELECT count(*) FROM plants').pluck();
  const apply = sqliteChangeApplier(db, new SqliteEventLog(db), { last: lastPos });
  const before = Number(count.get());
  let read = 0;
  let inserted = 0;
  for await (const [{ tenant, plant, stamps }, line] of plantsOf(lines, defaultTenant)) {
    read += 1;
    const outcome = apply({ kind: 'create', plant, stamps }, tenant, at);
    if (outcome.outcome === 'created') inserted += 1;
    else if (outcome.outcome === 'conflict') throw new ImportError(conflictMessage(line, plant, { ...outcome.stored, tenant }));
  }
  const after = Number(count.get());
  if (after !== before + inserted) throw new ImportError(`the store holds ${after} plants after the import, expected ${before + inserted}; nothing was imported`);
  return { lines: read, inserted, unchanged: read - inserted, before, after };
}

/** The plant half of a SQLite transfer, handed to src/backup by its caller: the table that makes a file a store of plants. */
export const sqlitePlantTransfer = { table: 'plants', export: exportPlantsSqlite, import: importPlantsSqlite };
