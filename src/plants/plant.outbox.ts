/**
 * The outbox port: what a plant repository calls so that a change's webhook events commit with it. The plants
 * folder owns these types; src/webhooks implements them and src/store hands each repository its outbox, so the
 * repositories never load the webhook code (nor undici) themselves. Both directions carry data only: no SQL text
 * and no parameter positions cross from one folder to the other.
 */
import type { TraceContext } from '../tracing';
import type { StoredPlant } from './plant.repository';
import type { NewPlant } from './plant.schemas';

/**
 * SQLite: called inside the change's transaction, once per plant actually inserted (recordCreated) or edited or
 * deleted (recordChanged, with the plant as stored after an edit, its id alone for a delete); writes one event
 * per subscriber when WEBHOOK_EVENTS names the type, with the caller's trace when the request carried one.
 */
export type PlantOutbox = {
  recordCreated(plant: NewPlant, trace?: TraceContext): void;
  recordChanged(kind: 'updated' | 'deleted', plant: StoredPlant, trace?: TraceContext): void;
};

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
