/**
 * The PostgreSQL write path, shared by the repository's group commit and `plant-store import`: inside the
 * caller's transaction, take the feed's counter, read the batch's rows FOR UPDATE, decide each write with
 * plant.write-rule.ts in arrival order, then write what was decided (plants, change events and, given an outbox,
 * webhook events) in one statement. No rule lives here or in the database: only reads and writes of rows.
 */
import type pg from 'pg';
import type { TraceContext } from '../tracing';
import type { ChangeKind } from './plant-events';
import { deletedPlantJson, plantJson } from './plant.json';
import type { BatchOperation, PostgresPlantOutbox } from './plant.outbox';
import { decideWrite, idOf, rowAfter, type Decision, type EventDraft, type PlantRow, type PlantWrite } from './plant.write-rule';

/** One write of a batch and the trace its webhook events carry. */
export type BatchWrite = { write: PlantWrite; trace?: TraceContext };

/** A write's decision and, for one that wrote an event, that event's position (a put plant's new version). */
export type Applied = { decision: Decision; pos?: bigint };

/** What a batch did: each write's decision in arrival order, and how many of them changed a plant. */
export type AppliedBatch = { applied: Applied[]; changed: number };

/** The client of the caller's transaction: a pooled client or the import's own connection. */
type Queryable = Pick<pg.ClientBase, 'query'>;

// The counter row (migrations/postgres/005), locked until the transaction ends and moved past a restore's mark
// first (migrations/postgres/007): every writer of positions takes it, so batches of every replica and an import
// apply one after the other. Its own statement: the rows are read by the next one, whose snapshot starts after
// the lock is held, so it sees every plant the previous holder committed.
const TAKE = { name: 'plant_positions_take', text: 'SELECT plant_positions_take($1) AS last_pos' };
const READ = { name: 'plants_for_update', text: 'SELECT id, name, tag, version FROM plants WHERE id = ANY($1::bigint[]) FOR UPDATE' };

// Each id a batch leaves with a plant is written once with its final values (inserted, or replaced); each it
// leaves without one is deleted. The events carry the positions decided here; the counter is written back and
// every replica's feed woken (NOTIFY is delivered at commit).
const WRITE_PLANTS = `WITH put AS (
  INSERT INTO plants (id, name, tag, version) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version
), removed AS (
  DELETE FROM plants WHERE id = ANY($5::bigint[])
), events AS (
  INSERT INTO plant_events (pos, kind, plant_id, name, tag, prev_tag, at)
  SELECT e.*, $12::bigint FROM unnest($6::bigint[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[]) AS e
), counter AS (
  UPDATE plant_event_counter SET last_pos = $13::bigint
)`;
const WRITE = { name: 'plants_write', text: `${WRITE_PLANTS}\nSELECT pg_notify('plant_events', $13::text)` };
// The same with the batch's webhook events, in the order the outbox listed them (seq follows that order).
const WRITE_WITH_EVENTS = {
  name: 'plants_write_webhooks',
  text: `${WRITE_PLANTS}, outbox AS (
  INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, event_type, trace_context, next_attempt_at, created_at, updated_at)
  SELECT w.event_id, w.subscriber, w.plant_id, w.payload, w.event_type, w.trace, $20::bigint, $20::bigint, $20::bigint
  FROM unnest($14::text[], $15::text[], $16::bigint[], $17::text[], $18::text[], $19::text[]) WITH ORDINALITY AS w(event_id, subscriber, plant_id, payload, event_type, trace, n)
  ORDER BY w.n
)
SELECT pg_notify('plant_events', $13::text)`,
};

// int8 columns as the caller's client parses them: bigint on the service's connections (src/db/postgres.ts),
// the decimal string on a client without that parser. BigInt() takes either.
type Int8 = bigint | string;
type Row = { id: Int8; name: string; tag: string | null; version: Int8 };

function toRow({ id, name, tag, version }: Row): PlantRow {
  const row: PlantRow = { id: BigInt(id), name, version: BigInt(version) };
  if (tag !== null) row.tag = tag;
  return row;
}

type Event = EventDraft & { pos: bigint };
type Change = { decision: Extract<Decision, { event: EventDraft }>; pos: bigint; trace?: TraceContext };

/** Decides each write against the row its id holds at that point of the batch; numbers each event after `lastPos`. */
function decideAll(batch: readonly BatchWrite[], rows: Map<bigint, PlantRow | undefined>, lastPos: bigint) {
  const applied: Applied[] = [];
  const changes: Change[] = [];
  let pos = lastPos;
  for (const { write, trace } of batch) {
    const id = idOf(write);
    const current = rows.get(id);
    const decision = decideWrite(current, write);
    if (!('event' in decision)) {
      applied.push({ decision });
      continue;
    }
    pos += 1n;
    rows.set(id, rowAfter(current, decision, pos));
    applied.push({ decision, pos });
    changes.push({ decision, pos, trace });
  }
  return { applied, changes, lastPos: pos };
}

/** The plants columns: each changed id's final row, or its removal. */
function plantParams(changes: readonly Change[], rows: Map<bigint, PlantRow | undefined>): unknown[] {
  const put: PlantRow[] = [];
  const removed: bigint[] = [];
  for (const id of new Set(changes.map(({ decision }) => decision.event.id))) {
    const row = rows.get(id);
    if (row === undefined) removed.push(id);
    else put.push(row);
  }
  return [put.map((p) => p.id), put.map((p) => p.name), put.map((p) => p.tag ?? null), put.map((p) => p.version), removed];
}

function eventParams(changes: readonly Change[], at: number, lastPos: bigint): unknown[] {
  const events: Event[] = changes.map(({ decision, pos }) => ({ ...decision.event, pos }));
  return [
    events.map((e) => e.pos),
    events.map((e): ChangeKind => e.kind),
    events.map((e) => e.id),
    events.map((e) => e.name ?? null),
    events.map((e) => e.tag ?? null),
    events.map((e) => e.prevTag ?? null),
    at,
    lastPos,
  ];
}

const outboxView = ({ decision, trace }: Change): BatchOperation =>
  decision.outcome === 'created'
    ? { kind: 'created', plant: decision.put, trace }
    : { kind: decision.outcome, id: decision.event.id, trace };

/** The webhook columns: one row per event the outbox answers, its body whole as the subscriber receives it. */
function webhookParams(changes: readonly Change[], outbox: PostgresPlantOutbox): unknown[] {
  const { operations, at } = outbox.eventsOf(changes.map(outboxView));
  const columns: unknown[][] = [[], [], [], [], [], []];
  operations.forEach(({ events, body, type, trace }, index) => {
    const { decision } = changes[index] as Change;
    const payload =
      'whole' in body ? body.whole : body.before + ('put' in decision ? plantJson(decision.put) : deletedPlantJson(decision.event.id)) + body.after;
    for (const event of events) [event.id, event.subscriber, decision.event.id, payload, type, trace].forEach((value, c) => columns[c]?.push(value));
  });
  return [...columns, at];
}

/**
 * Applies a batch inside the caller's open transaction; the caller commits. Writes nothing when no write changes
 * a plant (retries, conflicts, stale or missing edits), but still holds the counter until its transaction ends.
 */
export async function applyWrites(client: Queryable, batch: readonly BatchWrite[], at: number, outbox?: PostgresPlantOutbox): Promise<AppliedBatch> {
  const taken = await client.query<{ last_pos: Int8 }>({ ...TAKE, values: [at] });
  const ids = [...new Set(batch.map(({ write }) => idOf(write)))];
  const read = await client.query<Row>({ ...READ, values: [ids] });
  const rows = new Map<bigint, PlantRow | undefined>(read.rows.map((row) => [BigInt(row.id), toRow(row)]));
  const { applied, changes, lastPos } = decideAll(batch, rows, BigInt(taken.rows[0]?.last_pos ?? 0));
  if (changes.length === 0) return { applied, changed: 0 };
  const values = [...plantParams(changes, rows), ...eventParams(changes, at, lastPos)];
  if (outbox === undefined) await client.query({ ...WRITE, values });
  else await client.query({ ...WRITE_WITH_EVENTS, values: values.concat(webhookParams(changes, outbox)) });
  return { applied, changed: changes.length };
}
