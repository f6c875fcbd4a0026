/**
 * Fills the search keys a migration could not compute: a database cannot apply the service's Unicode rules
 * (searchKey: NFKC, then toLowerCase), so migrations add `plants.name_key` empty and the repository of each
 * dialect calls these when it opens the store, before it serves. Later writes set the key themselves (the stores'
 * DERIVED_COLUMNS); a replica of the previous version writing during a rolling upgrade leaves it NULL again
 * (migrations/postgres/009), for the next start to fill. The partial index plants_unkeyed makes the check free
 * when nothing is missing. SQL only.
 */
import type pg from 'pg';
import type { Db } from '../db/database.sqlite';
import { searchKey } from './plant.schemas';

// Keys a statement: small enough to keep a transaction short on a busy PostgreSQL, large enough that round trips do not dominate.
const CHUNK = 5000;

type Unkeyed = { tenant?: string; id: bigint; name: string };

const keysOf = (rows: readonly Unkeyed[]) => rows.map((row) => searchKey(row.name));

/** SQLite: every missing key in one transaction; answers how many it filled. */
export function fillSearchKeysSqlite(db: Db): number {
  // Every tenant's plants (plants_unkeyed); each key written by the row's own (tenant, id).
  const missing = db.prepare<[number], Unkeyed>('SELECT tenant, id, name FROM plants WHERE name_key IS NULL LIMIT ?');
  const fill = db.prepare<[string, string, bigint]>('UPDATE plants SET name_key = ? WHERE tenant = ? AND id = ?');
  // A read first: with nothing to fill (every start but the first after an upgrade) the write lock is never taken,
  // so a worker restarted while others write does not queue for it.
  if (missing.all(1).length === 0) return 0;
  return db
    .transaction(() => {
      let filled = 0;
      for (let rows = missing.all(CHUNK); rows.length > 0; rows = missing.all(CHUNK)) {
        const keys = keysOf(rows);
        rows.forEach((row, index) => fill.run(keys[index] as string, row.tenant ?? '', row.id));
        filled += rows.length;
      }
      return filled;
    })
    .immediate();
}

/**
 * PostgreSQL: the missing keys of every tenant, a chunk per statement (each its own transaction), in (tenant, id)
 * order on plants_tenant_unkeyed; answers how many it filled.
 */
export async function fillSearchKeysPostgres(pool: { query: pg.Pool['query'] }): Promise<number> {
  let filled = 0;
  for (;;) {
    const { rows } = await pool.query<Unkeyed & { tenant: string }>('SELECT tenant, id, name FROM plants WHERE name_key IS NULL ORDER BY tenant, id LIMIT $1', [CHUNK]);
    if (rows.length === 0) return filled;
    // A key only where the name is still the one read: a concurrent rename sets its own key.
    await pool.query(
      'UPDATE plants p SET name_key = u.name_key FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS u(tenant, id, name, name_key) ' +
        'WHERE p.tenant = u.tenant AND p.id = u.id AND p.name = u.name AND p.name_key IS NULL',
      [rows.map((row) => row.tenant), rows.map((row) => row.id), rows.map((row) => row.name), keysOf(rows)],
    );
    filled += rows.length;
    if (rows.length < CHUNK) return filled;
  }
}
