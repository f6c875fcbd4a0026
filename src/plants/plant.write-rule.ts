/**
 * Every rule of a plant write, once: from the plant as stored (or none), the operation and the time of its
 * commit, what the write does and answers. Pure: no SQL, no clock (the store hands in the time), no positions.
 * Both stores and `plant-store import` apply its decisions; a store's only job is to read the current row, write
 * what is decided and number the event it names.
 */
import type { ChangeEvent } from './plant.events';
import { plantOfRow, WRITABLE_MEMBERS, type MemberColumns, type Stamps, type StoredPlant } from './plant.members';
import type { Expected, PlantPatch, WriteOutcome } from './plant.repository';
import type { NewPlant } from './plant.schemas';

/** A plant as stored, with its version (the position of its last change: its ETag). */
export type PlantRow = StoredPlant & { version: bigint };

/**
 * One write, as the service or an import asks for it. A create's `stamps` are the times an import line carries
 * (a plant moved between stores keeps them); absent, the plant is created at the commit's time.
 */
export type PlantWrite =
  | { kind: 'create'; plant: NewPlant; stamps?: Stamps }
  | { kind: 'update'; id: bigint; patch: PlantPatch; expected?: Expected }
  | { kind: 'delete'; id: bigint; expected?: Expected }
  | { kind: 'put'; id: bigint; plant: PutPlant; expected?: PutExpected };

/** A put's plant: a NewPlant's members without the id (the path's). */
export type PutPlant = Omit<NewPlant, 'id'>;

/**
 * A put's precondition: the versions it may replace (If-Match), `exists` (If-Match: *: any plant, none is a
 * failure) or `absent` (If-None-Match: *: create only). Absent: create or replace, whatever is stored.
 */
export type PutExpected = Expected | 'exists' | 'absent';

/** The change event a decision writes, without the position and time its store gives it. */
export type EventDraft = Omit<ChangeEvent, 'pos' | 'at' | 'tenant'>;

/**
 * What a write does. `put` stores the plant (inserted when there was none, replaced otherwise) with the event's
 * position as its version; `remove` deletes it; both write `event`. Every other outcome writes nothing:
 * `replayed` (a create equal to what is stored), `unchanged` (an edit that leaves the plant as it is), `conflict`
 * (a create under an id that holds another plant), `stale` (If-Match names none of the current version, or a
 * create-only put meets a plant), `missing` (no plant; for a put, one its precondition needs).
 */
export type Decision =
  | { outcome: 'created' | 'updated'; put: StoredPlant; event: EventDraft }
  | { outcome: 'deleted'; remove: bigint; event: EventDraft }
  | { outcome: 'replayed' | 'unchanged' | 'conflict' | 'stale'; current: PlantRow }
  | { outcome: 'missing' };

/**
 * Whether an outcome fails its write: what a batch (all or nothing) stops at. A replayed create and an unchanged
 * edit succeed, writing nothing.
 */
export const failed = (outcome: Decision['outcome']): boolean => outcome === 'conflict' || outcome === 'stale' || outcome === 'missing';

/** The id a write is about: the row a store reads (and locks) before deciding. */
export const idOf = (write: PlantWrite): bigint => (write.kind === 'create' ? write.plant.id : write.id);

/** The plant a create stores: the NewPlant's members, an absent one left out, and its times. */
const plantOf = (plant: NewPlant, stamps: Stamps): StoredPlant => plantOfRow(plant.id, { ...plant, ...stamps });

/** The row a store read, as the rule takes it: a NULL column is an absent member. */
export const plantRowOf = (id: bigint, row: Partial<MemberColumns>, version: bigint): PlantRow => ({ ...plantOfRow(id, row), version });

/** Whether two plants hold the same members a client writes (their times aside). */
const sameAs = (current: StoredPlant, plant: StoredPlant): boolean => WRITABLE_MEMBERS.every((member) => current[member] === plant[member]);

/** The event of a put: the plant's members as the write leaves them. */
const eventOf = (kind: EventDraft['kind'], plant: StoredPlant): EventDraft => ({ ...plant, kind });

function decideCreate(current: PlantRow | undefined, plant: NewPlant, stamps: Stamps): Decision {
  const put = plantOf(plant, stamps);
  if (current !== undefined) return { outcome: sameAs(current, put) ? 'replayed' : 'conflict', current };
  return { outcome: 'created', put, event: eventOf('created', put) };
}

/** The merge of RFC 7396: a member left out keeps its value, a null removes it. */
function merged(current: StoredPlant, patch: PlantPatch): StoredPlant {
  const plant = { ...current } as Record<string, unknown>;
  for (const member of WRITABLE_MEMBERS) {
    const value = patch[member];
    if (value === null) delete plant[member];
    else if (value !== undefined) plant[member] = value;
  }
  return plant as StoredPlant;
}

function decideUpdate(current: PlantRow, patch: PlantPatch, at: string): Decision {
  const { version: _version, ...stored } = current;
  const put = merged(stored, patch);
  if (sameAs(current, put)) return { outcome: 'unchanged', current };
  put.updatedAt = at;
  // The name and tag it replaced, for the feed's filters: an edit that takes a plant out of a search or a tag
  // reaches the streams that showed it.
  const event: EventDraft = { ...eventOf('updated', put), prevName: current.name };
  if (current.tag !== undefined) event.prevTag = current.tag;
  return { outcome: 'updated', put, event };
}

/**
 * Create or replace: with no plant under the id, a create (`missing` when a precondition needs one); otherwise a
 * merge that sets every writable member (one left out is removed), decided as an edit is, so an equal plant is
 * `unchanged` and writes nothing.
 */
function decidePut(current: PlantRow | undefined, write: Extract<PlantWrite, { kind: 'put' }>, at: string): Decision {
  const { expected } = write;
  if (current === undefined) {
    if (expected !== undefined && expected !== 'absent') return { outcome: 'missing' };
    return decideCreate(undefined, { ...write.plant, id: write.id }, { createdAt: at, updatedAt: at });
  }
  if (expected === 'absent' || (typeof expected === 'object' && !expected.includes(current.version))) return { outcome: 'stale', current };
  const patch: Record<string, unknown> = {};
  for (const member of WRITABLE_MEMBERS) patch[member] = write.plant[member] ?? null;
  return decideUpdate(current, patch, at);
}

/**
 * Decides one write from the row its id holds now (undefined: none) at `at`, the time of the commit that will
 * hold it (timeText): a created plant's createdAt and updatedAt, an edited one's updatedAt.
 */
export function decideWrite(current: PlantRow | undefined, write: PlantWrite, at: string): Decision {
  if (write.kind === 'create') return decideCreate(current, write.plant, write.stamps ?? { createdAt: at, updatedAt: at });
  if (write.kind === 'put') return decidePut(current, write, at);
  if (current === undefined) return { outcome: 'missing' };
  if (write.expected !== undefined && !write.expected.includes(current.version)) return { outcome: 'stale', current };
  if (write.kind === 'update') return decideUpdate(current, write.patch, at);
  // A delete's event carries what the feed's filters read: the name and tag the plant had (its data is the id alone).
  const event: EventDraft = { kind: 'deleted', id: current.id, name: current.name, ...(current.tag === undefined ? {} : { tag: current.tag }) };
  return { outcome: 'deleted', remove: current.id, event };
}

/**
 * The row a decision leaves under its id, given the version its event took: what the next write of the same id
 * in one batch must be decided against.
 */
export function rowAfter(current: PlantRow | undefined, decision: Decision, version: bigint | undefined): PlantRow | undefined {
  if ('put' in decision) return { ...decision.put, version: version as bigint };
  if ('remove' in decision) return undefined;
  return current;
}

/**
 * What a repository answers for a decision once its commit is durable (plant.repository.ts): `version` is the
 * position its event took, for a `put`.
 */
export function answerOf(decision: Decision, version: bigint | undefined): WriteOutcome {
  switch (decision.outcome) {
    case 'created':
    case 'updated':
      return { outcome: decision.outcome, stored: decision.put, version: version as bigint };
    case 'deleted':
    case 'missing':
      return { outcome: decision.outcome };
    case 'stale':
      return { outcome: 'stale', version: decision.current.version };
    default: {
      const { version: current, ...stored } = decision.current;
      return { outcome: decision.outcome, stored, version: current };
    }
  }
}
