/**
 * The change feed's store port: the events each repository writes in its change's own transaction, read back in
 * position order. Positions only grow and a reader that has seen position n has seen every committed position
 * below it, on both stores (PostgreSQL: the counter row of migrations/postgres/005, docs/decisions/feed.md).
 */

import { repeatWithoutOverlap } from '../lifecycle';
import type { Logger } from '../logger';
import { SHARED_TENANT, type TenantKey } from '../tenant';
import { MEMBER_COLUMNS, plantOfRow, selectMembers, type MemberColumns, type PlantMembers } from './plant.members';

const PRUNE_EVERY_MS = 60_000;

export type ChangeKind = 'created' | 'updated' | 'deleted';

/**
 * A plant_events row as both stores read it (EVENT_COLUMNS): the plant's members in their own columns, each read
 * as its member's name; `at` is an integer column, a number on SQLite and a bigint on PostgreSQL.
 */
export type EventRow = { tenant?: string; pos: bigint; kind: ChangeKind; plant_id: bigint; prev_name: string | null; prev_tag: string | null; at: number | bigint } & Partial<MemberColumns>;

/** The columns an event is read from, in the order a store writes them (a store that routes by tenant reads `tenant` too). */
export const EVENT_COLUMNS = `pos, kind, plant_id, ${selectMembers()}, prev_name, prev_tag, at`;

/** The columns an event is written to, in the order of `eventValues`. */
export const EVENT_INSERT_COLUMNS = `tenant, pos, kind, plant_id, ${MEMBER_COLUMNS}, prev_name, prev_tag, at`;

/**
 * One change as stored: the plant's members after the change (for a delete, the name and tag it had alone);
 * `prevName` and `prevTag` what an edit replaced. The feed's filters read both sides: a stream sees a change of a
 * plant that matched before it or matches after. Events written before the times and previous names were kept
 * (migrations 008/009) may lack them: a filter then treats the side it cannot read as matching.
 */
export type ChangeEvent = {
  /** The tenant whose plant changed: only its streams see the event. */
  tenant: TenantKey;
  pos: bigint;
  kind: ChangeKind;
  id: bigint;
  prevName?: string;
  prevTag?: string;
  /** Unix ms of the commit's batch. */
  at: number;
} & Partial<PlantMembers>;

/** An event as stored, from its row: a null column is an absent member. */
export function toChangeEvent(row: EventRow): ChangeEvent {
  const event: ChangeEvent = { ...plantOfRow(row.plant_id, row), tenant: (row.tenant ?? SHARED_TENANT) as TenantKey, pos: row.pos, kind: row.kind, at: Number(row.at) };
  if (row.prev_name !== null) event.prevName = row.prev_name;
  if (row.prev_tag !== null) event.prevTag = row.prev_tag;
  return event;
}

/**
 * What positions the log holds now: the oldest kept (none when empty) and the last ever written (0 when none).
 * `unwritten`: the position asked about lies in what a restore skipped (the 007 migrations), so it may name a change
 * the store the restore replaced made after the backup, which this store never had.
 */
export type EventBounds = { oldest?: bigint; last: bigint; unwritten?: boolean };

export type PlantEventLog = {
  /** Events with a position greater than `after`, ascending, at most `limit`: every tenant's (the live reader routes them). */
  readEvents(after: bigint, limit: number): Promise<ChangeEvent[]>;
  /** The tenant's events with a position greater than `after`, ascending, at most `limit`: a stream's catch-up. */
  readTenantEvents(tenant: TenantKey, after: bigint, limit: number): Promise<ChangeEvent[]>;
  /** The bounds, and whether `resumeAfter` (when given) is a position a restore skipped. */
  eventBounds(resumeAfter?: bigint): Promise<EventBounds>;
  /** Removes up to `limit` of the oldest events written before `beforeMs`; resolves how many. */
  pruneEvents(beforeMs: number, limit: number): Promise<number>;
};

/** Removes the events written before `beforeMs`, a thousand per statement, until none is left or `stop()`; resolves how many. */
async function pruneBefore(log: PlantEventLog, beforeMs: number, stop: () => boolean): Promise<number> {
  let removed = 0;
  for (;;) {
    const count = await log.pruneEvents(beforeMs, 1000);
    removed += count;
    if (count < 1000 || stop()) return removed;
  }
}

/**
 * Deletes events older than EVENTS_RETENTION now and every minute (every retention, when shorter), one round at a
 * time; the returned function stops it. Apart from the feed because it runs once per machine (the leader's, on
 * SQLite across workers): the events table is shared.
 */
export function pruneEventsEvery(log: PlantEventLog, retentionMs: number, logger: Logger): () => void {
  const prune = (stopped: () => boolean) =>
    pruneBefore(log, Date.now() - retentionMs, stopped).then(
      (removed) => {
        if (removed > 0) logger.debug({ removed }, 'change feed pruned');
      },
      (err: unknown) => logger.debug({ err }, 'change feed cannot prune now'),
    );
  return repeatWithoutOverlap(Math.min(PRUNE_EVERY_MS, retentionMs), prune, { now: true });
}

/**
 * Calls `wake` whenever new events may be readable (a local commit, another replica's NOTIFY, another worker's commit
 * notice), with how many when the signal knows (a SQLite commit); returns the stop.
 */
export type ChangeSignal = (wake: (events?: number) => void) => () => void;
