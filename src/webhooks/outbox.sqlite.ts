import type { ChangeEntry, ChangeOutbox } from '../change-outbox';
import type { Db } from '../db/database.sqlite';
import { AppError } from '../errors';
import { SHARED_TENANT, type TenantKey } from '../tenant';
import { bodyOf, newEventId, traceColumn, traceOfColumn } from './event';
import type { Backlog, OutboxEvent, OutboxStore, Settlement } from './outbox';

type Row = {
  seq: number;
  event_id: string;
  payload: string;
  event_type: string;
  attempts: number;
  created_at: number;
  next_attempt_at: number;
  trace_context: string | null;
  tenant: string;
};
type Key = { at: number; seq: number };

// Each row keeps its change's tenant (migrations/sqlite/012), for the delivery's webhook-tenant header.
const COLUMNS = 'seq, event_id, payload, event_type, attempts, created_at, next_attempt_at, trace_context, tenant';
// Before every event: times are Unix ms and seq starts at 1.
const START: Key = { at: -1, seq: 0 };

/**
 * The SQLite outbox: `record` runs inside the repository's group-commit transaction, on its connection. One
 * process owns a SQLite file, so an event being attempted is held in memory (no write per claim) until its
 * outcome is written. Outcomes are written on the same connection, each batch committed with synchronous=NORMAL
 * (no fsync of its own): an fsync per outcome batch would block the event loop and slow creates on a busy disk,
 * and a lost outcome only means one more delivery with the same webhook-id (the next create's fsync of the shared
 * WAL makes it durable anyway). Not on a second connection: in WAL mode each
 * connection drops its whole page cache whenever the other has committed, so two would keep re-reading each
 * other's pages. Pruning and retiring, which run seldom, keep a second connection.
 */
export class SqliteOutbox implements ChangeOutbox, OutboxStore {
  private readonly held = new Map<string, Set<string>>();
  /** Per subscriber, the last due event a claim took or read past: the next claim starts after it. */
  private readonly cursors = new Map<string, Key>();
  private readonly insert;
  private readonly due;
  private readonly settleAll: (settlements: readonly Settlement[]) => void;
  private readonly pruneSome;
  private readonly retire;
  private readonly pending;
  onRecorded: () => void = () => undefined;

  /**
   * `db` is the repository's connection; `writer` a second one to the same file, for pruning and retiring,
   * which this outbox owns and closes.
   */
  constructor(
    db: Db,
    private readonly writer: Db,
    private readonly subscribers: readonly string[],
    /** WEBHOOK_EVENTS: the types written; others are not stored at all. */
    private readonly types: ReadonlySet<string>,
  ) {
    this.writer.pragma('synchronous = NORMAL');
    this.insert = db.prepare<unknown[]>(
      `INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, event_type, next_attempt_at, created_at, updated_at, trace_context, tenant)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // Due events in (next_attempt_at, seq) order, after a cursor: START for all of them.
    this.due = db
      .prepare<[string, number, number, number, number, number], Row>(
        `SELECT ${COLUMNS} FROM webhook_outbox
         WHERE subscriber = ? AND status = 'pending' AND next_attempt_at <= ? AND next_attempt_at >= ?
           AND (next_attempt_at > ? OR seq > ?)
         ORDER BY next_attempt_at, seq LIMIT ?`,
      )
      .safeIntegers(false);
    const update = db.prepare<[string, number, number, number, string | null, bigint]>(
      'UPDATE webhook_outbox SET status = ?, attempts = ?, next_attempt_at = ?, updated_at = ?, last_error = ? WHERE seq = ?',
    );
    const settleAll = db.transaction((settlements: readonly Settlement[]) => {
      for (const s of settlements) update.run(s.status, s.attempts, s.nextAttemptAt, s.at, s.error, BigInt(s.seq));
    });
    const relaxed = db.prepare('PRAGMA synchronous = NORMAL');
    const full = db.prepare('PRAGMA synchronous = FULL');
    this.settleAll = (settlements: readonly Settlement[]) => {
      relaxed.run();
      try {
        settleAll.immediate(settlements);
      } finally {
        full.run();
      }
    };
    this.pruneSome = this.writer.prepare<[number]>(
      `DELETE FROM webhook_outbox WHERE seq IN
       (SELECT seq FROM webhook_outbox WHERE status <> 'pending' AND updated_at < ? LIMIT 1000)`,
    );
    this.retire = this.writer.prepare<[number, string]>(
      `UPDATE webhook_outbox SET status = 'failed', updated_at = ?, last_error = 'subscriber no longer configured'
       WHERE status = 'pending' AND subscriber NOT IN (SELECT value FROM json_each(?))`,
    );
    // Read through the partial index webhook_outbox_due, which holds pending rows only.
    this.pending = db
      .prepare<[], { events: number; oldest: number | null }>("SELECT count(*) AS events, min(created_at) AS oldest FROM webhook_outbox WHERE status = 'pending'")
      .safeIntegers(false);
    for (const subscriber of subscribers) this.held.set(subscriber, new Set());
  }

  record(entry: ChangeEntry): void {
    if (!this.types.has(entry.type)) return;
    try {
      const payload = bodyOf(entry);
      const now = Date.now();
      const context = traceColumn(entry.trace);
      const tenant = entry.tenant ?? SHARED_TENANT;
      for (const subscriber of this.subscribers) this.insert.run(newEventId(), subscriber, entry.subject, payload, entry.type, now, now, now, context, tenant);
    } catch (error) {
      // Thrown as a store fault, the whole batch rolls back: a change is never committed without its events.
      throw new AppError('store_unavailable', undefined, { cause: error });
    }
    this.onRecorded();
  }

  /**
   * Events being attempted stay pending on disk, so a claim must read past them. A claim that is not a sweep
   * starts where the last one ended instead of at the first due event: under steady creates every finished
   * attempt claims again, and reading past all those held each time cost more than the delivery itself. What a
   * cursor can miss (a retry that fell due before it) the next sweep finds.
   */
  claim(subscriber: string, limit: number, now: number, sweep: boolean): OutboxEvent[] {
    const held = this.held.get(subscriber) ?? new Set<string>();
    const from = sweep ? START : (this.cursors.get(subscriber) ?? START);
    const events: OutboxEvent[] = [];
    let last: Key | undefined;
    // Iterated, not read whole: with a backlog every claim would make a row for each held event as well.
    for (const row of this.due.iterate(subscriber, now, from.at, from.at, from.seq, limit + held.size)) {
      last = { at: row.next_attempt_at, seq: row.seq };
      const seq = String(row.seq);
      if (held.has(seq)) continue;
      held.add(seq);
      const trace = traceOfColumn(row.trace_context);
      const tenant = row.tenant as TenantKey;
      events.push({ seq, eventId: row.event_id, subscriber, payload: row.payload, type: row.event_type, attempts: row.attempts, createdAt: row.created_at, trace, tenant });
      if (events.length === limit) break;
    }
    if (last !== undefined) this.cursors.set(subscriber, last);
    return events;
  }

  settle(settlements: readonly Settlement[]): void {
    this.settleAll(settlements);
    for (const held of this.held.values()) for (const s of settlements) held.delete(s.seq);
  }

  /** Lets go of events whose attempt was abandoned (at shutdown): they stay pending. */
  release(seqs: readonly string[]): void {
    for (const held of this.held.values()) for (const seq of seqs) held.delete(seq);
  }

  prune(before: number): number {
    return this.pruneSome.run(before).changes;
  }

  retireOthers(subscribers: readonly string[], now: number): number {
    return this.retire.run(now, JSON.stringify(subscribers)).changes;
  }

  backlog(): Backlog {
    const row = this.pending.get();
    return { events: row?.events ?? 0, oldestCreatedAt: row?.oldest ?? undefined };
  }

  close(): void {
    this.writer.close();
  }
}
