/**
 * The stored answers of Idempotency-Key, per store: each caller's key with the fingerprint of the request that
 * first used it and the answer it got. An expired row counts as absent, is replaced by the next save under its
 * key, and is deleted by the prune. SQL only; the rules are in plant.idempotency.ts.
 */
import type { Db } from '../db/database.sqlite';
import type { PgPool } from '../db/database.postgres';

/** A write's answer as stored: status, ETag, Location and body text (absent for a 204). */
export type StoredAnswer = { fingerprint: string; status: number; etag?: string; location?: string; body?: string };

export type IdempotencyKeys = {
  /** The answer stored under the caller's key, unless it expired by `now` (Unix ms). */
  find(caller: string, key: string, now: number): Promise<StoredAnswer | undefined>;
  /** Stores the answer until `expiresAt`; a live answer already under the key is kept (another replica's). */
  save(caller: string, key: string, answer: StoredAnswer, expiresAt: number): Promise<void>;
  /** Deletes at most `limit` keys expired by `now`; resolves with how many. */
  prune(now: number, limit: number): Promise<number>;
};

type Row = { fingerprint: string; status: number | bigint; etag: string | null; location: string | null; body: string | null };

const answerOf = (row: Row): StoredAnswer => ({
  fingerprint: row.fingerprint,
  status: Number(row.status),
  ...(row.etag === null ? {} : { etag: row.etag }),
  ...(row.location === null ? {} : { location: row.location }),
  ...(row.body === null ? {} : { body: row.body }),
});

const COLUMNS = 'caller, key, fingerprint, status, etag, location, body, expires_at';
const REPLACE_EXPIRED = 'ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag, location = excluded.location, body = excluded.body, expires_at = excluded.expires_at';

export function sqliteIdempotencyKeys(db: Db): IdempotencyKeys {
  const select = db.prepare<[string, string, number], Row>('SELECT fingerprint, status, etag, location, body FROM idempotency_keys WHERE caller = ? AND key = ? AND expires_at > ?');
  const insert = db.prepare<unknown[]>(`INSERT INTO idempotency_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ${REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= ?`);
  const prune = db.prepare<[number, number]>('DELETE FROM idempotency_keys WHERE (caller, key) IN (SELECT caller, key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)');
  return {
    find: (caller, key, now) => Promise.resolve().then(() => {
      const row = select.get(caller, key, now);
      return row === undefined ? undefined : answerOf(row);
    }),
    save: (caller, key, answer, expiresAt) => Promise.resolve().then(() => {
      insert.run(caller, key, answer.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, expiresAt, Date.now());
    }),
    prune: (now, limit) => Promise.resolve().then(() => prune.run(now, limit).changes),
  };
}

export function postgresIdempotencyKeys(pool: PgPool): IdempotencyKeys {
  return {
    find: async (caller, key, now) => {
      const { rows } = await pool.query<Row>(
        'SELECT fingerprint, status, etag, location, body FROM idempotency_keys WHERE caller = $1 AND key = $2 AND expires_at > to_timestamp($3 / 1000.0)',
        [caller, key, now],
      );
      return rows[0] === undefined ? undefined : answerOf(rows[0]);
    },
    save: async (caller, key, answer, expiresAt) => {
      await pool.query(
        `INSERT INTO idempotency_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8 / 1000.0)) ${REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= now()`,
        [caller, key, answer.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, expiresAt],
      );
    },
    prune: async (now, limit) => {
      const { rowCount } = await pool.query(
        'DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= to_timestamp($1 / 1000.0) LIMIT $2)',
        [now, limit],
      );
      return rowCount ?? 0;
    },
  };
}
