/**
 * The PostgreSQL write path, shared by the repository's group commit and `plant-store import`: read the batch's
 * rows, decide each write with plant.write-rule.ts in arrival order, then write what was decided (plants, change
 * events and, given an outbox, webhook events) in one statement, plants_write (migrations/postgres/008, with
 * tenants 017), which takes the feed's counter and writes only if the rows read are still as they were. Every row
 * is keyed by (tenant, id): a batch may hold several tenants' writes, and one tenant's id never meets another's.
 * No rule lives here or in the database: only reads and writes of rows.
 */
import type { TenantKey } from '../tenant';
import type pg from 'pg';
import type { TraceContext } from '../tracing';
import type { ChangeKind } from './plant.events';
import type { ChangeOutboxRows } from '../change-outbox';
import type { BatchOutcome, KeepAnswer, WriteOutcome } from './plant.repository';
import { ClaimKeysFirst, keyedAnswersCte, KeysLive, LIVE_ANSWERS, liveAnswers, NONE_LIVE, keyedAnswersValues, versionPlaceholder, type KeyedAnswer } from './plant.idempotency-keys.postgres';
import { DERIVED_COLUMNS, derivedValues, MEMBERS, selectMembers, timeText, type MemberColumns, type PlantMembers } from './plant.members';
import { outboxCte, WEBHOOK_ARGUMENTS, webhookParams } from './plant.write-outbox.postgres';
import { distinctKeys, TenantRows } from './plant.rows.postgres';
import { answerOf, decideWrite, failed, idOf, plantRowOf, rowAfter, type Decision, type EventDraft, type PlantRow, type PlantWrite } from './plant.write-rule';

/**
 * One entry of a batch, in its caller's tenant, and the trace its webhook events carry: a write, or (`unit`) a
 * client's batch of writes, applied all or nothing; `keep`, its Idempotency-Key answer (plant.repository.postgres.ts
 * stores it in the same transaction).
 */
export type BatchWrite = ({ write: PlantWrite } | { unit: readonly PlantWrite[] }) & { tenant: TenantKey; trace?: TraceContext; keep?: KeepAnswer };

/** A write's decision and, for one that wrote an event, that event's position (a put plant's new version). */
export type Applied = { decision: Decision; pos?: bigint };

/** A unit's answer: each write's, or its first failed write's index and decision, none of it written. */
export type AppliedUnit = { unit: Applied[] } | { failed: number; decision: Decision };

/** What a batch did: each entry's decision(s) in arrival order, and how many of them changed a plant. */
export type AppliedBatch = { applied: (Applied | AppliedUnit)[]; changed: number };

/** A pool (each statement its own transaction) or the import's connection inside its transaction. */
type Queryable = { query: <R extends pg.QueryResultRow>(config: pg.QueryConfig) => Promise<pg.QueryResult<R>> };

// A read without a lock: plants_write checks under the counter that what the decisions rest on still holds. A
// lateral subquery per (tenant, id): a primary key probe each, whatever plan the connection cached.
const READ = {
  name: 'plants_read_tenants',
  text: `SELECT p.tenant, p.id, ${selectMembers('p.')}, p.version FROM unnest($1::text[], $2::bigint[]) AS r(tenant, id)
CROSS JOIN LATERAL (SELECT * FROM plants p WHERE p.tenant = r.tenant AND p.id = r.id) AS p`,
};
// plants_write's arguments (writeParams): the time, the rows read (tenants, ids, versions), the puts (tenants,
// ids, one array per member, one per derived column, offsets), the removals (tenants, ids), then the events
// (tenants, kinds, ids, one array per member, replaced names and tags).
const WRITE_ARGUMENTS = 14 + 2 * MEMBERS.length + DERIVED_COLUMNS.length;
const WRITE_PLANTS = `plants_write(${Array.from({ length: WRITE_ARGUMENTS }, (_, index) => `$${index + 1}`).join(', ')})`;
const WRITE = { name: 'plants_write', text: `SELECT ${WRITE_PLANTS} AS base` };

type Statement = { name: string; text: string };
const STATEMENTS = new Map<string, Statement>([[WRITE.name, WRITE]]);

/** plants_write alone, or with the webhook events' CTE, the keyed answers' CTEs (their arguments after the events'), or both. */
function statementOf(webhooks: boolean, keyed: boolean): Statement {
  const name = `plants_write${webhooks ? '_webhooks' : ''}${keyed ? '_keyed' : ''}`;
  const known = STATEMENTS.get(name);
  if (known !== undefined) return known;
  const keys = keyed ? keyedAnswersCte(WRITE_ARGUMENTS + (webhooks ? WEBHOOK_ARGUMENTS : 0) + 1) : undefined;
  // Keyed: the write runs only when none of its keys holds an answer (live).
  const ctes = keys === undefined ? [] : [keys.live];
  ctes.push(`applied AS MATERIALIZED (SELECT ${WRITE_PLANTS} AS base${keys === undefined ? '' : ` WHERE ${NONE_LIVE}`})`);
  if (webhooks) ctes.push(outboxCte(WRITE_ARGUMENTS + 1));
  if (keys !== undefined) ctes.push(keys.keys);
  const last = keys === undefined ? 'SELECT base FROM applied' : `SELECT (SELECT base FROM applied) AS base, ${LIVE_ANSWERS}`;
  const statement = { name, text: `WITH ${ctes.join(', ')}\n${last}` };
  STATEMENTS.set(name, statement);
  return statement;
}

// int8 columns as the caller's client parses them: bigint on the service's connections (src/db/database.postgres.ts),
// the decimal string on a client without that parser. BigInt() takes either.
type Int8 = bigint | string;
type Row = MemberColumns & { tenant: TenantKey; id: Int8; version: Int8 };

const toRow = (row: Row): PlantRow => plantRowOf(BigInt(row.id), row, BigInt(row.version));

/** One array per member, of the plants or events given, NULL where one lacks it. */
const memberArrays = (plants: readonly Partial<PlantMembers>[]): unknown[][] => MEMBERS.map((member) => plants.map((plant) => plant[member] ?? null));

/** A decision that writes, in its tenant, its position (an offset until written) and the answer that carries it. */
type Change = { tenant: TenantKey; decision: Extract<Decision, { event: EventDraft }>; pos: bigint; trace?: TraceContext; answer: Applied };

/** The rows as a batch decides on them: a row, or none (undefined) for a (tenant, id) that holds no plant. */
type Rows = TenantRows<PlantRow | undefined>;

/**
 * Decides each write against the row its (tenant, id) holds at that point of the batch. Events are numbered 1, 2,
 * … (a put row's version likewise): offsets from the position the write takes. A unit whose write fails is taken
 * back whole: its rows, positions and changes as before it.
 */
function decideAll(batch: readonly BatchWrite[], rows: Rows, at: string) {
  const applied: (Applied | AppliedUnit)[] = [];
  const changes: Change[] = [];
  let pos = 0n;
  const decide = (tenant: TenantKey, write: PlantWrite, trace: TraceContext | undefined): Applied => {
    const id = idOf(write);
    const current = rows.get(tenant, id);
    const decision = decideWrite(current, write, at);
    if (!('event' in decision)) return { decision };
    pos += 1n;
    rows.set(tenant, id, rowAfter(current, decision, pos));
    const answer: Applied = { decision, pos };
    changes.push({ tenant, decision, pos, trace, answer });
    return answer;
  };
  const decideUnit = (tenant: TenantKey, unit: readonly PlantWrite[], trace: TraceContext | undefined): AppliedUnit => {
    const before = { pos, changes: changes.length, rows: unit.map((write) => [idOf(write), rows.get(tenant, idOf(write))] as const) };
    const answers: Applied[] = [];
    for (const [index, write] of unit.entries()) {
      const answer = decide(tenant, write, trace);
      if (!failed(answer.decision.outcome)) answers.push(answer);
      else {
        pos = before.pos;
        changes.length = before.changes;
        // In reverse: an id the unit names twice gets back the row it had before the first.
        for (const [id, row] of before.rows.toReversed()) rows.set(tenant, id, row);
        return { failed: index, decision: answer.decision };
      }
    }
    return { unit: answers };
  };
  for (const entry of batch) applied.push('write' in entry ? decide(entry.tenant, entry.write, entry.trace) : decideUnit(entry.tenant, entry.unit, entry.trace));
  return { applied, changes };
}

/**
 * plants_write's arguments after the time: each changed (tenant, id) as read (its version, null for none) and as
 * left (its final row, or its removal), then the events.
 */
function writeParams(changes: readonly Change[], read: TenantRows<PlantRow>, rows: Rows): unknown[] {
  const keys = distinctKeys(changes.map(({ tenant, decision }) => ({ tenant, id: decision.event.id })));
  const put: { tenant: TenantKey; row: PlantRow }[] = [];
  const removed: { tenant: TenantKey; id: bigint }[] = [];
  for (const key of keys) {
    const row = rows.get(key.tenant, key.id);
    if (row === undefined) removed.push(key);
    else put.push({ tenant: key.tenant, row });
  }
  const putRows = put.map(({ row }) => row);
  const events: EventDraft[] = changes.map(({ decision }) => decision.event);
  const derived = putRows.map(derivedValues);
  return [
    keys.map((key) => key.tenant),
    keys.map((key) => key.id),
    keys.map((key) => read.get(key.tenant, key.id)?.version ?? null),
    put.map((p) => p.tenant),
    putRows.map((p) => p.id),
    ...memberArrays(putRows),
    ...DERIVED_COLUMNS.map((_, index) => derived.map((values) => values[index])),
    putRows.map((p) => p.version),
    removed.map((r) => r.tenant),
    removed.map((r) => r.id),
    changes.map((c) => c.tenant),
    events.map((e): ChangeKind => e.kind),
    events.map((e) => e.id),
    ...memberArrays(events),
    events.map((e) => e.prevName ?? null),
    events.map((e) => e.prevTag ?? null),
  ];
}

/** A unit's answer as the port gives it: every write's outcome, or its first failure's. */
export function unitOutcome(unit: AppliedUnit): BatchOutcome {
  if ('failed' in unit) return { outcome: 'failed', index: unit.failed, result: answerOf(unit.decision, undefined) };
  return { outcome: 'applied', results: unit.unit.map(({ decision, pos }) => answerOf(decision, pos)) };
}

/** A batch entry's outcome as the port answers it: a write's, or a unit's. */
export function outcomeOf(entry: BatchWrite, result: Applied | AppliedUnit): WriteOutcome | BatchOutcome {
  return 'write' in entry ? answerOf((result as Applied).decision, (result as Applied).pos) : unitOutcome(result as AppliedUnit);
}

/** The answers a keyed batch stores, rendered with versionPlaceholder; ClaimKeysFirst when one stores nothing. */
function keyedAnswers(batch: readonly BatchWrite[], applied: readonly (Applied | AppliedUnit)[]): KeyedAnswer[] {
  return batch.flatMap((entry, index) => {
    const result = applied[index];
    if (entry.keep === undefined || result === undefined) return [];
    const answer = entry.keep.render(outcomeOf(entry, result), versionPlaceholder);
    if (answer === undefined) throw new ClaimKeysFirst();
    return [{ tenant: entry.tenant, keep: entry.keep, answer }];
  });
}

async function readRows(client: Queryable, batch: readonly BatchWrite[]): Promise<TenantRows<PlantRow>> {
  const keys = distinctKeys(batch.flatMap((entry) => ('write' in entry ? [entry.write] : entry.unit).map((write) => ({ tenant: entry.tenant, id: idOf(write) }))));
  const { rows } = await client.query<Row>({ ...READ, values: [keys.map((key) => key.tenant), keys.map((key) => key.id)] });
  const read = new TenantRows<PlantRow>();
  for (const row of rows) read.set(row.tenant, BigInt(row.id), toRow(row));
  return read;
}

/**
 * One attempt: decide from the rows as read (or, `guess`, as none: what a create's id usually holds), then write;
 * undefined when a row is not as the decisions assumed, and nothing was written.
 */
async function attempt(client: Queryable, batch: readonly BatchWrite[], at: number, guess: boolean, outbox: ChangeOutboxRows | undefined, keyed: boolean): Promise<AppliedBatch | undefined> {
  const read = guess ? new TenantRows<PlantRow>() : await readRows(client, batch);
  const rows: Rows = read.copy<undefined>();
  const { applied, changes } = decideAll(batch, rows, timeText(at));
  if (changes.length === 0) {
    if (keyed) throw new ClaimKeysFirst();
    return { applied, changed: 0 };
  }
  // Rendered now, while each position is still its offset in the batch.
  const answers = keyed ? keyedAnswers(batch, applied) : [];
  let values = [at, ...writeParams(changes, read, rows)];
  if (outbox !== undefined) values = values.concat(webhookParams(changes, outbox, at));
  if (answers.length > 0) values = values.concat(keyedAnswersValues(answers));
  const written = await client.query<{ base: Int8 | null; live?: Parameters<typeof liveAnswers>[0] | null }>({ ...statementOf(outbox !== undefined, answers.length > 0), values });
  const live = written.rows[0]?.live;
  if (live !== null && live !== undefined) throw new KeysLive(liveAnswers(live));
  const base = written.rows[0]?.base;
  if (base === null || base === undefined) return undefined;
  for (const { answer } of changes) answer.pos = (answer.pos as bigint) + BigInt(base);
  for (const { keep } of answers) keep.kept = true;
  return { applied, changed: changes.length };
}

/**
 * Applies a batch: each statement its own transaction on a pool, or inside the caller's (the import's). A batch of
 * creates alone is first decided as if none of its ids held a plant, so the usual create costs the write alone
 * (one round trip). When a row is not as assumed (a retried create, or another batch or replica wrote it since
 * the read), nothing was written, and the batch is read and decided again. `keyed`: the answers of its writes
 * sent with Idempotency-Key are stored by the same statement, which writes nothing and throws KeysLive when some
 * of their keys already hold answers, and fails, nothing written, with an error claimKeysFirst recognizes when
 * one of their keys turns live meanwhile or one of them fails or changes nothing (no entry may repeat a caller's key).
 */
export async function applyWrites(client: Queryable, batch: readonly BatchWrite[], at: number, outbox?: ChangeOutboxRows, keyed = false): Promise<AppliedBatch> {
  let guess = batch.every((entry) => ('write' in entry ? [entry.write] : entry.unit).every((write) => write.kind === 'create'));
  for (;;) {
    const done = await attempt(client, batch, at, guess, outbox, keyed);
    if (done !== undefined) return done;
    guess = false;
  }
}
