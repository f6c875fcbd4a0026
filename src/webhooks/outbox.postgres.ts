import type { Pool } from 'pg';
import type { ChangeEntry, ChangeOutboxRows, OutboxRow } from '../change-outbox';
import { SHARED_TENANT, type TenantKey } from '../tenant';
import { bodyOf, newEventId, traceColumn, traceOfColumn } from './event';
import type { Backlog, OutboxEvent, OutboxStore, Settlement } from './outbox';

/**
 * The PostgreSQL outbox, shared by every replica. Events are written in the statement that applies a store's
 * batch, from the rows rowsOf answers (src/plants/plant.write.postgres.ts composes it). A claim moves next_attempt_at past a lease
 * in the same statement that picks the rows (FOR UPDATE SKIP LOCKED), so two replicas never attempt one event at
 * once; a replica that dies mid-attempt leaves the event to be claimed again when its lease runs out.
 */
export class PostgresOutbox implements OutboxStore, Pick<ChangeOutboxRows, 'rowsOf'> {
  constructor(
    private readonly pool: Pool,
    private readonly subscribers: readonly string[],
    private readonly leaseMs: number,
    /** WEBHOOK_EVENTS: the types written. */
    private readonly types: readonly string[],
  ) {}

  /**
   * The rows of a batch's changes, in their order: one per subscriber for each change whose type WEBHOOK_EVENTS
   * names, each with a new id and its whole body.
   */
  rowsOf(entries: readonly ChangeEntry[]): OutboxRow[] {
    const rows: OutboxRow[] = [];
    for (const entry of entries) {
      if (!this.types.includes(entry.type)) continue;
      const payload = bodyOf(entry);
      const trace = traceColumn(entry.trace);
      const tenant = entry.tenant ?? SHARED_TENANT;
      for (const subscriber of this.subscribers) rows.push({ eventId: newEventId(), subscriber, subject: entry.subject, type: entry.type, payload, trace, tenant });
    }
    return rows;
  }

  /** Every claim looks at all due events: claimed ones are leased on disk, so there is nothing to read past. */
  async claim(subscriber: string, limit: number, now: number): Promise<OutboxEvent[]> {
    const { rows } = await this.pool.query<{
      seq: string;
      event_id: string;
      payload: string;
      event_type: string;
      attempts: number;
      created_at: string;
      trace_context: string | null;
      tenant: string;
    }>(
      `UPDATE webhook_outbox SET next_attempt_at = $3
       WHERE seq IN (
         SELECT seq FROM webhook_outbox
         WHERE subscriber = $1 AND status = 'pending' AND next_attempt_at <= $2
         ORDER BY next_attempt_at, seq LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING seq, event_id, payload, event_type, attempts, created_at, trace_context, tenant`,
      [subscriber, now, now + this.leaseMs, limit],
    );
    return rows.map((row) => ({
      seq: String(row.seq),
      eventId: row.event_id,
      subscriber,
      payload: row.payload,
      type: row.event_type,
      attempts: row.attempts,
      createdAt: Number(row.created_at),
      trace: traceOfColumn(row.trace_context),
      tenant: row.tenant as TenantKey,
    }));
  }

  async settle(settlements: readonly Settlement[]): Promise<void> {
    await this.pool.query(
      `UPDATE webhook_outbox AS o
       SET status = s.status, attempts = s.attempts, next_attempt_at = s.next_attempt_at, updated_at = s.at, last_error = s.error
       FROM unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[], $5::bigint[], $6::text[]) AS s(seq, status, attempts, next_attempt_at, at, error)
       WHERE o.seq = s.seq`,
      [
        settlements.map((s) => s.seq),
        settlements.map((s) => s.status),
        settlements.map((s) => s.attempts),
        settlements.map((s) => s.nextAttemptAt),
        settlements.map((s) => s.at),
        settlements.map((s) => s.error),
      ],
    );
  }

  /** Abandoned at shutdown: due again at once, for this replica's next start or another replica now. */
  async release(seqs: readonly string[]): Promise<void> {
    await this.pool.query(`UPDATE webhook_outbox SET next_attempt_at = $2 WHERE seq = ANY($1::bigint[]) AND status = 'pending'`, [seqs, Date.now()]);
  }

  async prune(before: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM webhook_outbox WHERE seq IN (SELECT seq FROM webhook_outbox WHERE status <> 'pending' AND updated_at < $1 LIMIT 1000)`,
      [before],
    );
    return rowCount ?? 0;
  }

  /** The whole shared outbox's backlog: every replica reports the same number. */
  async backlog(): Promise<Backlog> {
    const { rows } = await this.pool.query<{ n: number; oldest: string | null }>(
      `SELECT count(*)::int AS n, min(created_at) AS oldest FROM webhook_outbox WHERE status = 'pending'`,
    );
    const oldest = rows[0]?.oldest;
    return { events: rows[0]?.n ?? 0, oldestCreatedAt: oldest === null || oldest === undefined ? undefined : Number(oldest) };
  }

  async retireOthers(subscribers: readonly string[], now: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE webhook_outbox SET status = 'failed', updated_at = $2, last_error = 'subscriber no longer configured'
       WHERE status = 'pending' AND NOT (subscriber = ANY($1::text[]))`,
      [subscribers, now],
    );
    return rowCount ?? 0;
  }
}
