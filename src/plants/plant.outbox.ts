/**
 * A plant change's webhook events, as the outbox port (src/change-outbox.ts) takes them: the plants folder names
 * its event types and writes their data with plant.json.ts; src/webhooks implements the port and src/store hands
 * each repository its outbox, so the repositories never load the webhook code (nor undici) themselves. Both
 * directions carry data only: no SQL text and no parameter positions cross from one folder to the other.
 */
import type { ChangeEntry } from '../change-outbox';
import type { TraceContext } from '../tracing';
import { deletedPlantJson, plantJson } from './plant.json';
import type { NewPlant } from './plant.schemas';
import type { Decision } from './plant.write-rule';

/**
 * The event a decision writes, if any (created, updated or deleted; never a replay, conflict, unchanged edit,
 * stale or missing one). plant.created's body is the plant itself, as the contract fixed it; an edit's and a
 * delete's is the envelope around the plant as stored after the edit, `{id}` alone for a delete.
 */
export function changeEntry(decision: Decision, trace: TraceContext | undefined): ChangeEntry | undefined {
  const traced = trace === undefined ? {} : { trace };
  if (decision.outcome === 'created') return { type: 'plant.created', subject: decision.put.id, data: plantJson(decision.put), bare: true, ...traced };
  if (decision.outcome === 'updated') return { type: 'plant.updated', subject: decision.put.id, data: plantJson(decision.put), ...traced };
  if (decision.outcome === 'deleted') return { type: 'plant.deleted', subject: decision.remove, data: deletedPlantJson(decision.remove), ...traced };
  return undefined;
}

/** One operation of a PostgreSQL batch as the outbox sees it: a create with its plant, or an edit or delete; each with its trace. */
export type BatchOperation = { kind: 'created'; plant: NewPlant; trace?: TraceContext } | { kind: 'updated' | 'deleted'; id: bigint; trace?: TraceContext };

/**
 * An event's body: whole when the outbox can write it before the statement runs (a create's, the NewPlant as
 * sent); otherwise the text around the plant's JSON as the statement stores it (an edit's plant, `{id}` alone for
 * a delete), which the repository writes from the stored row with plant.json.ts's rendering for PostgreSQL.
 */
export type EventBody = { whole: string } | { before: string; after: string };

/** What one operation of a batch writes if the statement applies it (created, updated or deleted; never a retry, conflict, stale or missing one). */
export type OperationEvents = {
  /** The event type, the same for each of its events. */
  type: string;
  /** One event per subscriber, in the order they are written; none when WEBHOOK_EVENTS does not name the type. */
  events: readonly { id: string; subscriber: string }[];
  body: EventBody;
  /** The trace_context column, as the outbox stores it; null without a trace. */
  trace: string | null;
};

/** A batch's webhook events as data: per operation in the batch's order, and the time they are written at. */
export type BatchEvents = { operations: readonly OperationEvents[]; at: number };

/**
 * PostgreSQL: the repository writes a batch's events in the statement that applies it (one transaction, one
 * round trip), from what `eventsOf` answers for the batch.
 */
export type PostgresPlantOutbox = {
  eventsOf(batch: readonly BatchOperation[]): BatchEvents;
  /** Called after a commit that changed `changed` plants: the dispatcher looks at once instead of at its next poll. */
  wake(changed: number): void;
};
