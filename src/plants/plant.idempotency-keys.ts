/**
 * The stored answers of Idempotency-Key, per store: each caller's key with the fingerprint of the request that
 * first used it and the answer it got. An expired row counts as absent, is replaced by the next save under its
 * key, and is deleted by the prune. SQL only; the rules are in plant.idempotency.ts. The first answer is written
 * by the store inside the write's own transaction, after it found the key free there (keepAnswerSqlite here;
 * PostgreSQL's in plant.idempotency-keys.postgres.ts); `save` is for a 2xx answer no store write carried.
 */
import type { TenantKey } from '../tenant';
import type { Db } from '../db/database.sqlite';
import { AppError } from '../errors';
import type { BatchOutcome, KeepAnswer, RenderedAnswer, StoredAnswer, WriteOutcome } from './plant.repository';

export type { StoredAnswer } from './plant.repository';

export type IdempotencyKeys = {
  /**
   * True when the store's keyed write reads the key itself (PostgreSQL: in the write's statement), so the step
   * does not look it up first; false when the step looks it up before the write (SQLite: a local read).
   */
  checkedByWrite: boolean;
  /** The answer stored under the caller's key in the tenant, unless it expired by `now` (Unix ms). */
  find(tenant: TenantKey, caller: string, key: string, now: number): Promise<StoredAnswer | undefined>;
  /** Stores the answer until `expiresAt`; a live answer already under the key is kept (another replica's). */
  save(tenant: TenantKey, caller: string, key: string, answer: StoredAnswer, expiresAt: number): Promise<void>;
  /** Deletes at most `limit` keys expired by `now`; resolves with how many. */
  prune(now: number, limit: number): Promise<number>;
};

/** One key of one caller, as one string: what a process holds in flight and a statement's answers are matched by. */
export const keySlot = (caller: string, key: string): string => `${caller}\n${key}`;

export type AnswerRow = { fingerprint: string; status: number | bigint; etag: string | null; location: string | null; body: string | null };

export const storedAnswerOf = (row: AnswerRow): StoredAnswer => ({
  fingerprint: row.fingerprint,
  status: Number(row.status),
  ...(row.etag === null ? {} : { etag: row.etag }),
  ...(row.location === null ? {} : { location: row.location }),
  ...(row.body === null ? {} : { body: row.body }),
});

export const COLUMNS = 'caller, key, fingerprint, status, etag, location, body, expires_at';
export const REPLACE_EXPIRED = 'ON CONFLICT (caller, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag, location = excluded.location, body = excluded.body, expires_at = excluded.expires_at';

/**
 * SQLite's table (migrations/sqlite/012): the tenant leads the primary key (tenant, caller, key), so a caller's
 * key in one tenant is another key than the same one in another, and every statement names the tenant.
 */
const SQLITE_COLUMNS = `tenant, ${COLUMNS}`;
const SQLITE_REPLACE_EXPIRED = REPLACE_EXPIRED.replace('ON CONFLICT (caller, key)', 'ON CONFLICT (tenant, caller, key)');
const SQLITE_INSERT = `INSERT INTO idempotency_keys (${SQLITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ${SQLITE_REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= ?`;
const SQLITE_LIVE = 'FROM idempotency_keys WHERE tenant = ? AND caller = ? AND key = ? AND expires_at > ?';

const valuesOf = (tenant: TenantKey, keep: KeepAnswer, answer: RenderedAnswer) =>
  [tenant, keep.caller, keep.key, keep.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, keep.expiresAt];

/**
 * A keyed write whose key another process holds (a replica, or another process on the SQLite file): the store
 * wrote nothing for it. Its first request has committed by the time a store says so (plant.idempotency.ts then
 * replays the stored answer); unanswered, it is the 409 with Retry-After.
 */
export class IdempotencyKeyTaken extends AppError {
  /** `stored`: the answer under the key, when the store read it already. */
  constructor(readonly stored?: StoredAnswer) {
    super('idempotency_key_in_use', undefined, { headers: { 'Retry-After': '1' } });
  }
}

/**
 * Claims and keeps keyed answers on SQLite, inside the caller's transaction (the write lock held, so no other
 * process is half-way through a write): `taken` when a live key is already stored, which the write must then not
 * be applied for; `keep` writes the answer of a write applied under a free key. Prepared once, after the migrations.
 */
export type SqliteKeys = {
  taken: (tenant: TenantKey, keep: KeepAnswer) => boolean;
  keep: (tenant: TenantKey, keep: KeepAnswer, outcome: WriteOutcome | BatchOutcome) => void;
};

export function keepAnswerSqlite(db: Db): SqliteKeys {
  const live = db.prepare<[TenantKey, string, string, number]>(`SELECT 1 ${SQLITE_LIVE}`).pluck();
  const insert = db.prepare<unknown[]>(SQLITE_INSERT);
  return {
    taken: (tenant, keep) => live.get(tenant, keep.caller, keep.key, Date.now()) !== undefined,
    keep: (tenant, keep, outcome) => {
      const answer = keep.render(outcome);
      if (answer === undefined) return;
      insert.run(...valuesOf(tenant, keep, answer), Date.now());
      keep.kept = true;
    },
  };
}

export function sqliteIdempotencyKeys(db: Db): IdempotencyKeys {
  const select = db.prepare<[TenantKey, string, string, number], AnswerRow>(`SELECT fingerprint, status, etag, location, body ${SQLITE_LIVE}`);
  const insert = db.prepare<unknown[]>(SQLITE_INSERT);
  // Expiry is every tenant's: the prune deletes by time alone.
  const prune = db.prepare<[number, number]>(
    'DELETE FROM idempotency_keys WHERE (tenant, caller, key) IN (SELECT tenant, caller, key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)',
  );
  return {
    checkedByWrite: false,
    find: (tenant, caller, key, now) => Promise.resolve().then(() => {
      const row = select.get(tenant, caller, key, now);
      return row === undefined ? undefined : storedAnswerOf(row);
    }),
    save: (tenant, caller, key, answer, expiresAt) => Promise.resolve().then(() => {
      insert.run(tenant, caller, key, answer.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, expiresAt, Date.now());
    }),
    prune: (now, limit) => Promise.resolve().then(() => prune.run(now, limit).changes),
  };
}
