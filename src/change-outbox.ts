/**
 * The change outbox port: how a store that commits a change hands the webhook outbox the events to write with it,
 * as data. A resource's repository builds the entries (its event type, the id that changed, its JSON text from its
 * own writer); src/webhooks implements the port and src/store hands it to each repository, so neither folder
 * imports the other, and no SQL text or parameter position crosses between them. Ground floor: imports nothing of
 * the service but tracing.
 */
import type { TenantKey } from './tenant';
import type { TraceContext } from './tracing';

/** One change, as its webhook events are written: one per subscriber, when WEBHOOK_EVENTS names the type. */
export type ChangeEntry = {
  /** The event type (the delivery's webhook-event-type, and the `type` of its envelope). */
  type: string;
  /** The id of what changed: the outbox row's subject. */
  subject: bigint;
  /** The resource's JSON text, from its JSON writer: the event's `data`. */
  data: string;
  /** The body is `data` alone, not the Standard Webhooks envelope `{"type":…,"data":…}` around it. */
  bare?: boolean;
  /** The caller's W3C trace, continued by the deliveries. */
  trace?: TraceContext;
  /** The tenant whose resource changed, named in each delivery (absent: the shared tenant). */
  tenant?: TenantKey;
};

/**
 * For a store whose outbox shares its connection (SQLite): called inside the change's transaction, once per change
 * actually committed (never for a replay, a conflict or an edit that changes nothing). A throw is a store fault:
 * the change rolls back with its events.
 */
export type ChangeOutbox = { record(entry: ChangeEntry): void };

/** One outbox row as data: what a store that writes the rows in its own statement inserts. */
export type OutboxRow = { eventId: string; subscriber: string; subject: bigint; type: string; payload: string; trace: string | null; tenant?: TenantKey };

/**
 * For a store that writes the outbox rows in the statement that applies its batch (PostgreSQL): `rowsOf` answers
 * the rows of the entries, in their order (none for a type WEBHOOK_EVENTS leaves out); `wake` is called after a
 * commit that wrote `changed` of them, so the dispatcher looks at once instead of at its next poll.
 */
export type ChangeOutboxRows = { rowsOf(entries: readonly ChangeEntry[]): OutboxRow[]; wake(changed: number): void };
