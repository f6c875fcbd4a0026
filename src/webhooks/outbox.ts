import type { TenantKey } from '../tenant';
import type { TraceContext } from '../tracing';

export type OutboxEvent = {
  seq: string;
  eventId: string;
  subscriber: string;
  payload: string;
  /** The change's event type (ChangeEntry.type, src/change-outbox.ts): the delivery's webhook-event-type. */
  type: string;
  attempts: number;
  /** Unix ms when the event was written, in the change's transaction: where the delivery lag starts. */
  createdAt: number;
  trace?: TraceContext;
  /** The tenant whose resource changed (ChangeEntry.tenant): with tenants on, named in webhook-tenant. */
  tenant: TenantKey;
};

/** The outcome of one attempt, written back in batches. `attempts` counts this one. */
export type Settlement = {
  seq: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  at: number;
  error: string | null;
};

/** What the dispatcher needs from an outbox, whatever the database. */
export type OutboxStore = {
  /**
   * Up to `limit` due events of one subscriber that no other attempt holds. `sweep` (the dispatcher's periodic
   * poll) looks at every due event; otherwise a store may look only past where its last claim ended.
   */
  claim(subscriber: string, limit: number, now: number, sweep: boolean): OutboxEvent[] | Promise<OutboxEvent[]>;
  settle(settlements: readonly Settlement[]): void | Promise<void>;
  /** Lets go of claimed events whose attempt was abandoned at shutdown: they stay pending as they were. */
  release(seqs: readonly string[]): void | Promise<void>;
  /** Deletes a slice (at most 1000) of delivered and failed events settled before `before`; answers how many. */
  prune(before: number): number | Promise<number>;
  /** Marks pending events of subscribers no longer configured as failed; answers how many. */
  retireOthers(subscribers: readonly string[], now: number): number | Promise<number>;
  /** Events still pending, whoever holds them: the backlog, and when its oldest event was written. */
  backlog(): Backlog | Promise<Backlog>;
};

/** The pending events and the Unix ms the oldest of them was written (undefined when none is pending). */
export type Backlog = { events: number; oldestCreatedAt: number | undefined };
