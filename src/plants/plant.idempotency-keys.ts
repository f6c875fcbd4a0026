/**
 * The stored answers of Idempotency-Key, per store: each caller's key with the fingerprint of the request that
 * first used it and the answer it got. An expired row counts as absent, is replaced by the next save under its
 * key, and is deleted by the prune. SQL only; the rules are in plant.idempotency.ts. The first answer is written
 * by the store inside the write's own transaction, after it found the key free there (keepAnswerSqlite;
 * claimKeysPostgres, finishKeysPostgres); `save` is for a 2xx answer no store write carried.
 */
import type { Db } from '../db/database.sqlite';
import type { PgPool } from '../db/database.postgres';

import type pg from 'pg';
import { AppError } from '../errors';
import type { BatchOutcome, KeepAnswer, RenderedAnswer, StoredAnswer, WriteOutcome } from './plant.repository';

/** The transaction's connection. */
type Queryable = { query: <R extends pg.QueryResultRow>(config: pg.QueryConfig) => Promise<pg.QueryResult<R>> };

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

const COLUMNS = 'caller, key, fingerprint, status, etag, location, body, expires_at';
const REPLACE_EXPIRED = 'ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag, location = excluded.location, body = excluded.body, expires_at = excluded.expires_at';

const valuesOf = (keep: KeepAnswer, answer: RenderedAnswer) =>
  [keep.caller, keep.key, keep.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, keep.expiresAt];

/**
 * A keyed write whose key another process holds (a replica, or another process on the SQLite file): the store
 * wrote nothing for it. Its first request has committed by the time a store says so (plant.idempotency.ts then
 * replays the stored answer); unanswered, it is the 409 with Retry-After.
 */
export class IdempotencyKeyTaken extends AppError {
  constructor() {
    super('idempotency_key_in_use', undefined, { headers: { 'Retry-After': '1' } });
  }
}

/**
 * Claims and keeps keyed answers on SQLite, inside the caller's transaction (the write lock held, so no other
 * process is half-way through a write): `taken` when a live key is already stored, which the write must then not
 * be applied for; `keep` writes the answer of a write applied under a free key. Prepared once, after the migrations.
 */
export type SqliteKeys = { taken: (keep: KeepAnswer) => boolean; keep: (keep: KeepAnswer, outcome: WriteOutcome | BatchOutcome) => void };

export function keepAnswerSqlite(db: Db): SqliteKeys {
  const live = db.prepare<[string, string, number]>('SELECT 1 FROM idempotency_keys WHERE caller = ? AND key = ? AND expires_at > ?').pluck();
  const insert = db.prepare<unknown[]>(`INSERT INTO idempotency_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ${REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= ?`);
  return {
    taken: (keep) => live.get(keep.caller, keep.key, Date.now()) !== undefined,
    keep: (keep, outcome) => {
      const answer = keep.render(outcome);
      if (answer === undefined) return;
      insert.run(...valuesOf(keep, answer), Date.now());
      keep.kept = true;
    },
  };
}

/**
 * The first statement of a PostgreSQL transaction that holds keyed writes: claims each key with a row that only
 * this transaction sees until it commits, and answers the indexes of `keeps` it could not claim (a live key).
 * A key another replica's open transaction claimed makes this one wait for that commit (or rollback), so one key
 * is applied once. Keys are claimed in one order (caller, key) on every replica, so two transactions claiming
 * keys the other holds wait in turn rather than deadlock.
 */
export async function claimKeysPostgres(client: Queryable, keeps: readonly KeepAnswer[]): Promise<Set<number>> {
  // One claim per key: a key twice in one statement would fail it whole. This process's in-flight set keeps a key
  // out of a second request while its first is open, so a repeat is taken, as it would be in a later commit.
  const slot = (keep: KeepAnswer) => `${keep.caller}\n${keep.key}`;
  const firsts = new Map(keeps.toReversed().map((keep) => [slot(keep), keep]));
  const unique = [...firsts.values()];
  const { rows } = await client.query<{ caller: string; key: string }>({
    name: 'idempotency_keys_claim',
    text: `INSERT INTO idempotency_keys (caller, key, fingerprint, status, expires_at)
SELECT c, k, f, 0, to_timestamp(x / 1000.0) FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) AS r(c, k, f, x) ORDER BY c, k
ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = 0, etag = NULL, location = NULL, body = NULL, expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= now()
RETURNING caller, key`,
    values: [unique.map((keep) => keep.caller), unique.map((keep) => keep.key), unique.map((keep) => keep.fingerprint), unique.map((keep) => keep.expiresAt)],
  });
  const claimed = new Set(rows.map((row) => `${row.caller}\n${row.key}`));
  return new Set(keeps.flatMap((keep, index) => (claimed.has(slot(keep)) && firsts.get(slot(keep)) === keep ? [] : [index])));
}

/**
 * The last statement before COMMIT: each claimed key gets its write's answer, or is given back (deleted) when the
 * outcome stores nothing (a failed write), so the client may retry with it.
 */
export async function finishKeysPostgres(client: Queryable, kept: readonly { keep: KeepAnswer; outcome: WriteOutcome | BatchOutcome }[]): Promise<void> {
  const answered: { keep: KeepAnswer; answer: RenderedAnswer }[] = [];
  const released: KeepAnswer[] = [];
  for (const { keep, outcome } of kept) {
    const answer = keep.render(outcome);
    if (answer === undefined) released.push(keep);
    else {
      // Its transaction either commits it or fails the write, whose caller is answered the failure.
      keep.kept = true;
      answered.push({ keep, answer });
    }
  }
  await client.query({
    name: 'idempotency_keys_finish',
    text: `WITH released AS (DELETE FROM idempotency_keys WHERE (caller, key) IN (SELECT * FROM unnest($7::text[], $8::text[])))
UPDATE idempotency_keys i SET status = r.s, etag = r.e, location = r.l, body = r.b
FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[]) AS r(c, k, s, e, l, b) WHERE i.caller = r.c AND i.key = r.k`,
    values: [
      answered.map(({ keep }) => keep.caller),
      answered.map(({ keep }) => keep.key),
      answered.map(({ answer }) => answer.status),
      answered.map(({ answer }) => answer.etag ?? null),
      answered.map(({ answer }) => answer.location ?? null),
      answered.map(({ answer }) => answer.body ?? null),
      released.map((keep) => keep.caller),
      released.map((keep) => keep.key),
    ],
  });
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
        // SKIP LOCKED: a row a write is claiming again is left to it, so the prune never waits on a write or deadlocks with one.
        'DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= to_timestamp($1 / 1000.0) LIMIT $2 FOR UPDATE SKIP LOCKED)',
        [now, limit],
      );
      return rowCount ?? 0;
    },
  };
}
