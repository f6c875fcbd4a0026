import type { Pool, PoolClient } from 'pg';
import type { TraceContext } from '../http/trace-context';
import type { NewPlant } from '../plants/plant.schemas';
import { newEventId, newPlantPayload, traceColumn, traceOfColumn } from './event';
import type { OutboxEvent, OutboxStore, Settlement } from './outbox';

type Queryable = Pick<PoolClient, 'query'>;

/**
 * The PostgreSQL outbox, shared by every replica. recordCreated runs on the client holding the plant's
 * transaction. A claim moves next_attempt_at past a lease in the same statement that picks the rows
 * (FOR UPDATE SKIP LOCKED), so two replicas never attempt one event at once; a replica that dies mid-attempt
 * leaves the event to be claimed again when its lease runs out.
 */
export class PostgresOutbox implements OutboxStore {
  constructor(
    private readonly pool: Pool,
    private readonly subscribers: readonly string[],
    private readonly leaseMs: number,
  ) {}

  /**
   * Inside the caller's transaction, for the plants it actually inserted: one event per subscriber each.
   * `traces[i]`, when given, is the W3C trace of the create that brought `plants[i]`.
   */
  async recordCreated(client: Queryable, plants: readonly NewPlant[], traces: readonly (TraceContext | undefined)[] = []): Promise<void> {
    if (plants.length === 0 || this.subscribers.length === 0) return;
    const ids: string[] = [];
    const subscribers: string[] = [];
    const plantIds: string[] = [];
    const payloads: string[] = [];
    const contexts: (string | null)[] = [];
    plants.forEach((plant, index) => {
      const payload = newPlantPayload(plant);
      const context = traceColumn(traces[index]);
      for (const subscriber of this.subscribers) {
        ids.push(newEventId());
        subscribers.push(subscriber);
        plantIds.push(plant.id.toString());
        payloads.push(payload);
        contexts.push(context);
      }
    });
    await client.query(
      `INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, trace_context, next_attempt_at, created_at, updated_at)
       SELECT e, s, p, pl, t, $6::bigint, $6::bigint, $6::bigint
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(e, s, p, pl, t)`,
      [ids, subscribers, plantIds, payloads, contexts, Date.now()],
    );
  }

  async claim(subscriber: string, limit: number, now: number): Promise<OutboxEvent[]> {
    const { rows } = await this.pool.query<{ seq: string; event_id: string; payload: string; attempts: number; created_at: string; trace_context: string | null }>(
      `UPDATE webhook_outbox SET next_attempt_at = $3
       WHERE seq IN (
         SELECT seq FROM webhook_outbox
         WHERE subscriber = $1 AND status = 'pending' AND next_attempt_at <= $2
         ORDER BY next_attempt_at, seq LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING seq, event_id, payload, attempts, created_at, trace_context`,
      [subscriber, now, now + this.leaseMs, limit],
    );
    return rows.map((row) => ({
      seq: String(row.seq),
      eventId: row.event_id,
      subscriber,
      payload: row.payload,
      attempts: row.attempts,
      createdAt: Number(row.created_at),
      trace: traceOfColumn(row.trace_context),
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
  async countPending(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_outbox WHERE status = 'pending'`);
    return rows[0]?.n ?? 0;
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
