/**
 * The stored answers of Idempotency-Key on PostgreSQL: the keyed CTEs of a write's own statement, which read the
 * keys, write the answers and check that no key turned live meanwhile (plant.write.postgres.ts runs them); the
 * claim and finish of the transaction that claims keys first (plant.keyed.postgres.ts); the lookups, saves and
 * prune of plant.idempotency.ts. SQL only.
 *
 * Keys are per (tenant, caller, key). The primary key stays (caller, key) (migrations/postgres/012), which the
 * previous version's replicas name in their ON CONFLICT during a rolling upgrade: a caller acting in a tenant other
 * than the shared one is stored scoped to it (storedCaller), and every statement names the tenant column as well
 * (docs/decisions/stores.md, "Idempotency keys per tenant").
 */
import type pg from 'pg';
import { SHARED_TENANT, type TenantKey } from '../tenant';
import type { PgPool } from '../db/database.postgres';
import type { VersionText } from './plant.etags';
import { keySlot, storedAnswerOf, type AnswerRow, type IdempotencyKeys } from './plant.idempotency-keys';
import type { BatchOutcome, KeepAnswer, RenderedAnswer, StoredAnswer, WriteOutcome } from './plant.repository';

/**
 * The caller as its rows store it: itself in the shared tenant (so rows of the version before tenants keep their
 * meaning), else itself, a line feed and the tenant. Callers (a token's or a JWT subject's identity) hold no line
 * feed, and the tenant column beside it is compared too.
 */
export const storedCaller = (tenant: TenantKey, caller: string): string => (tenant === SHARED_TENANT ? caller : `${caller}\n${tenant}`);

/** A keyed write's slot in one batch: its tenant's caller and its key (keySlot of the stored caller). */
export const slotOf = (tenant: TenantKey, keep: KeepAnswer): string => keySlot(storedCaller(tenant, keep.caller), keep.key);

// This dialect's columns (the tenant first) and its replacement of an expired row: the conflict is on the primary
// key, (caller, key), whose stored caller names the tenant.
const COLUMNS = 'tenant, caller, key, fingerprint, status, etag, location, body, expires_at';
const REPLACE_EXPIRED =
  'ON CONFLICT (caller, key) DO UPDATE SET tenant = excluded.tenant, fingerprint = excluded.fingerprint, status = excluded.status, etag = excluded.etag, location = excluded.location, body = excluded.body, expires_at = excluded.expires_at';

/** The transaction's connection. */
type Queryable = { query: <R extends pg.QueryResultRow>(config: pg.QueryConfig) => Promise<pg.QueryResult<R>> };

/**
 * A version in an answer a keyed write's statement stores (migrations/postgres/014, idempotency_fill): its offset
 * in the batch between U+0001 and U+0002, which the statement replaces with the position plants_write took.
 */
export const versionPlaceholder: VersionText = (offset) => `\u0001${offset}\u0002`;

/** A keyed write's answer, in its tenant, rendered before its statement with versionPlaceholder. */
export type KeyedAnswer = { tenant: TenantKey; keep: KeepAnswer; answer: RenderedAnswer };

/** The keys' arguments of keyedAnswersCte, in its parameters' order. */
export const keyedAnswersValues = (rows: readonly KeyedAnswer[]): unknown[] => [
  rows.map(({ tenant }) => tenant),
  rows.map(({ tenant, keep }) => storedCaller(tenant, keep.caller)),
  rows.map(({ keep }) => keep.key),
  rows.map(({ keep }) => keep.fingerprint),
  rows.map(({ answer }) => answer.status),
  rows.map(({ answer }) => answer.etag ?? null),
  rows.map(({ answer }) => answer.location ?? null),
  rows.map(({ answer }) => answer.body ?? null),
  rows.map(({ keep }) => keep.expiresAt),
];

/**
 * The keyed writes' CTEs of the write's own statement (plant.write.postgres.ts), parameters from `$first`:
 * - `live`, the answers already stored under any of its keys (read before the write, in the statement's snapshot:
 *   a request sent again finds its answer here, and the write does not run);
 * - `keys`, after `applied` (the base plants_write returned, no row when a key was live): each answer stored under
 *   its key, its placeholders filled. A key that turned live since the snapshot (a write of it committed
 *   meanwhile, waited for under the feed's counter), or an expired row not pruned yet, fails the insert, and the
 *   whole statement rolls back and writes nothing (claimKeysFirst).
 */
export function keyedAnswersCte(first: number): { live: string; keys: string } {
  const $ = (index: number) => `$${first + index}`;
  return {
    // A subquery per key, not a join: a join's plan, cached by the connection while the table was small, scans the
    // whole table on every write after it has grown.
    live: `live AS MATERIALIZED (
  SELECT (SELECT json_build_array(i.caller, i.key, i.fingerprint, i.status, i.etag, i.location, i.body) FROM idempotency_keys i
    WHERE i.tenant = r.t AND i.caller = r.c AND i.key = r.k AND i.expires_at > now()) AS answer
  FROM unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[]) AS r(t, c, k)
)`,
    // A plain insert: a live or expired row under the key fails the statement (unique_violation), as does one
    // another transaction is writing, once that commits.
    keys: `keys AS (
  INSERT INTO idempotency_keys (${COLUMNS})
  SELECT r.t, r.c, r.k, r.f, r.s, idempotency_fill(r.e, applied.base), r.l, idempotency_fill(r.b, applied.base), to_timestamp(r.x / 1000.0)
  FROM applied, unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[], ${$(3)}::text[], ${$(4)}::int[], ${$(5)}::text[], ${$(6)}::text[], ${$(7)}::text[], ${$(8)}::float8[])
    AS r(t, c, k, f, s, e, l, b, x)
  WHERE applied.base IS NOT NULL
)`,
  };
}

/** The statement's column of the live answers: [caller, key, fingerprint, status, etag, location, body] each. */
export const LIVE_ANSWERS = '(SELECT json_agg(answer) FROM live WHERE answer IS NOT NULL) AS live';
/** The condition of the write: none of the keys holds an answer. */
export const NONE_LIVE = 'NOT EXISTS (SELECT FROM live WHERE answer IS NOT NULL)';

type LiveRow = [string, string, string, number, string | null, string | null, string | null];

/** The live answers a keyed statement returned, by keySlot of the stored caller (slotOf). */
export function liveAnswers(rows: readonly LiveRow[]): Map<string, StoredAnswer> {
  return new Map(rows.map(([caller, key, fingerprint, status, etag, location, body]) => [keySlot(caller, key), storedAnswerOf({ fingerprint, status, etag, location, body })]));
}

/** A keyed batch some of whose keys already hold answers: nothing was written; those writes replay them. */
export class KeysLive extends Error {
  constructor(readonly answers: Map<string, StoredAnswer>) {
    super('some Idempotency-Keys of this batch hold answers');
  }
}

/**
 * A keyed batch that one statement cannot settle: a keyed write of it changes nothing or fails (its key must still
 * be checked, under the counter, before its answer is sent), so it runs as a transaction that claims its keys first.
 */
export class ClaimKeysFirst extends Error {}

/** A keyed write's answer and the tenant it was asked in. */
export type TenantKeep = { tenant: TenantKey; keep: KeepAnswer };

/** Thrown by a keyed write's statement, or its keys' insert met a row under one of its keys: nothing was written. */
export const claimKeysFirst = (error: unknown): boolean => {
  if (error instanceof ClaimKeysFirst) return true;
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'idempotency_keys_pkey';
};

/**
 * The first statement of a PostgreSQL transaction that holds keyed writes: claims each key with a row that only
 * this transaction sees until it commits, and answers the indexes of `keeps` it could not claim (a live key).
 * A key another replica's open transaction claimed makes this one wait for that commit (or rollback), so one key
 * is applied once. Keys are claimed in one order (stored caller, key) on every replica, so two transactions
 * claiming keys the other holds wait in turn rather than deadlock.
 */
export async function claimKeysPostgres(client: Queryable, keeps: readonly TenantKeep[]): Promise<Set<number>> {
  // One claim per key: a key twice in one statement would fail it whole. This process's in-flight set keeps a key
  // out of a second request while its first is open, so a repeat is taken, as it would be in a later commit.
  const slot = ({ tenant, keep }: TenantKeep) => slotOf(tenant, keep);
  const firsts = new Map(keeps.toReversed().map((entry) => [slot(entry), entry]));
  const unique = [...firsts.values()];
  const { rows } = await client.query<{ caller: string; key: string }>({
    name: 'idempotency_keys_claim_tenants',
    text: `INSERT INTO idempotency_keys (tenant, caller, key, fingerprint, status, expires_at)
SELECT t, c, k, f, 0, to_timestamp(x / 1000.0) FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[]) AS r(t, c, k, f, x) ORDER BY c, k
ON CONFLICT (caller, key) DO UPDATE SET tenant = excluded.tenant, fingerprint = excluded.fingerprint, status = 0, etag = NULL, location = NULL, body = NULL,
  expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= now()
RETURNING caller, key`,
    values: [
      unique.map(({ tenant }) => tenant),
      unique.map(({ tenant, keep }) => storedCaller(tenant, keep.caller)),
      unique.map(({ keep }) => keep.key),
      unique.map(({ keep }) => keep.fingerprint),
      unique.map(({ keep }) => keep.expiresAt),
    ],
  });
  const claimed = new Set(rows.map((row) => keySlot(row.caller, row.key)));
  return new Set(keeps.flatMap((entry, index) => (claimed.has(slot(entry)) && firsts.get(slot(entry)) === entry ? [] : [index])));
}

/**
 * The last statement before COMMIT: each claimed key gets its write's answer, or is given back (deleted) when the
 * outcome stores nothing (a failed write), so the client may retry with it.
 */
export async function finishKeysPostgres(client: Queryable, kept: readonly (TenantKeep & { outcome: WriteOutcome | BatchOutcome })[]): Promise<void> {
  const answered: (TenantKeep & { answer: RenderedAnswer })[] = [];
  const released: TenantKeep[] = [];
  for (const { tenant, keep, outcome } of kept) {
    const answer = keep.render(outcome);
    if (answer === undefined) released.push({ tenant, keep });
    else {
      // Its transaction either commits it or fails the write, whose caller is answered the failure.
      keep.kept = true;
      answered.push({ tenant, keep, answer });
    }
  }
  await client.query({
    name: 'idempotency_keys_finish_tenants',
    text: `WITH released AS (DELETE FROM idempotency_keys WHERE (tenant, caller, key) IN (SELECT * FROM unnest($8::text[], $9::text[], $10::text[])))
UPDATE idempotency_keys i SET status = r.s, etag = r.e, location = r.l, body = r.b
FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[]) AS r(t, c, k, s, e, l, b)
WHERE i.tenant = r.t AND i.caller = r.c AND i.key = r.k`,
    values: [
      answered.map(({ tenant }) => tenant),
      answered.map(({ tenant, keep }) => storedCaller(tenant, keep.caller)),
      answered.map(({ keep }) => keep.key),
      answered.map(({ answer }) => answer.status),
      answered.map(({ answer }) => answer.etag ?? null),
      answered.map(({ answer }) => answer.location ?? null),
      answered.map(({ answer }) => answer.body ?? null),
      released.map(({ tenant }) => tenant),
      released.map(({ tenant, keep }) => storedCaller(tenant, keep.caller)),
      released.map(({ keep }) => keep.key),
    ],
  });
}

export function postgresIdempotencyKeys(pool: PgPool): IdempotencyKeys {
  return {
    checkedByWrite: true,
    find: async (tenant, caller, key, now) => {
      const { rows } = await pool.query<AnswerRow>(
        'SELECT fingerprint, status, etag, location, body FROM idempotency_keys WHERE tenant = $1 AND caller = $2 AND key = $3 AND expires_at > to_timestamp($4 / 1000.0)',
        [tenant, storedCaller(tenant, caller), key, now],
      );
      return rows[0] === undefined ? undefined : storedAnswerOf(rows[0]);
    },
    save: async (tenant, caller, key, answer, expiresAt) => {
      await pool.query(
        `INSERT INTO idempotency_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9 / 1000.0)) ${REPLACE_EXPIRED} WHERE idempotency_keys.expires_at <= now()`,
        [tenant, storedCaller(tenant, caller), key, answer.fingerprint, answer.status, answer.etag ?? null, answer.location ?? null, answer.body ?? null, expiresAt],
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
