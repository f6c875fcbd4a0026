/**
 * The stored answers of Idempotency-Key, per store: each caller's key with the fingerprint of the request that
 * first used it and the answer it got. An expired row counts as absent, is replaced by the next save under its
 * key, and is deleted by the prune. SQL only; the rules are in plant.idempotency.ts. The first answer is written
 * by the store inside the write's own transaction (keepAnswerSqlite, keepAnswerPostgres); `save` is for a 2xx
 * answer no store write carried.
 */
import type { Db } from '../db/database.sqlite';
import type { PgPool } from '../db/database.postgres';

import type { BatchOutcome, KeepAnswer, RenderedAnswer, StoredAnswer, WriteOutcome } from './plant.repository';

export type { StoredAnswer } from './plant.repository';

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

/** Keeps a write's answer: called by the store inside the write's transaction, with the write's outcome. */
export type KeepRow = (keep: KeepAnswer, outcome: WriteOutcome | BatchOutcome) => void;

const COLUMNS = 'caller, key, fingerprint, status, etag, location, body, expires_at';
const REPLACE_EXPIRED = 'ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag, location = excluded.location, body = excluded.body, expires_at = excluded.expires_at';

const valuesOf = (keep: KeepAnswer, answer: RenderedAnswer) =>
  [keep.caller, keep.key, keep.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, keep.expiresAt];

/** The statement is prepared here, once, after the migrations; it runs in the caller's transaction (savepoint). */
export function keepAnswerSqlite(db: Db): KeepRow {
  const insert = db.prepare<unknown[]>(`INSERT INTO idempotency_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ${REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= ?`);
  return (keep, outcome) => {
    const answer = keep.render(outcome);
    if (answer === undefined) return;
    insert.run(...valuesOf(keep, answer), Date.now());
    keep.kept = true;
  };
}

/** The keyed answers of one PostgreSQL commit, as the statement that stores them inside its transaction. */
export function keepAnswersPostgres(kept: readonly { keep: KeepAnswer; outcome: WriteOutcome | BatchOutcome }[]): { text: string; values: unknown[] } | undefined {
  const rows = kept.flatMap(({ keep, outcome }) => {
    const answer = keep.render(outcome);
    if (answer === undefined) return [];
    // Its transaction either commits it or fails the write, whose caller is answered the failure.
    keep.kept = true;
    return [{ values: valuesOf(keep, answer) }];
  });
  if (rows.length === 0) return undefined;
  const column = (index: number) => rows.map(({ values }) => values[index]);
  return {
    text: `INSERT INTO idempotency_keys (${COLUMNS}) SELECT c, k, f, s, e, l, b, to_timestamp(x / 1000.0)
FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::float8[]) AS r(c, k, f, s, e, l, b, x)
${REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= now()`,
    values: Array.from({ length: 8 }, (_, index) => column(index)),
  };
}

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
