import type { Pool } from 'pg';
import { deletedPlantJsonPostgres, plantJsonPostgres } from '../plants/plant.json';
import type { BatchOperation } from '../plants/plant.outbox';
import { newEventId, newPlantPayload, traceColumn, traceOfColumn } from './event';
import type { Backlog, OutboxEvent, OutboxStore, Settlement } from './outbox';

// An operation's plant id, in the statement below.
const ID = '($2::bigint[])[a.idx]';

/**
 * The plant group commit with its events, in one statement and so one transaction and one round trip: $1 to $7
 * are plants_change's parameters, $8 to $13 what eventParams gives. The events CTE inserts one row per subscriber
 * for each operation plants_change answers `created`, `updated` or `deleted` whose type WEBHOOK_EVENTS names ($13),
 * never for an identical retry, a conflict, a stale or missing edit; so a change and its events commit or roll
 * back together. A create's body is made in the process ($9); an edit's and a delete's here, from what the
 * function stored: changePayload's text in plant.json.ts's rendering for PostgreSQL, held to the same bytes by
 * tests/store/plant-json.test.ts. `applied` is MATERIALIZED: plants_change runs exactly once. Event ids are made
 * in the process, `cardinality($8)` per operation, used only where an event is written.
 */
export const APPLY_WITH_EVENTS = `WITH applied AS MATERIALIZED (
  SELECT idx, outcome, stored_name, stored_tag, stored_version FROM plants_change($1, $2, $3, $4, $5, $6, $7)
), events AS (
  INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, event_type, trace_context, next_attempt_at, created_at, updated_at)
  SELECT ($10::text[])[(a.idx - 1) * cardinality($8::text[]) + s.n], s.subscriber, ($2::bigint[])[a.idx],
         CASE a.outcome
           WHEN 'created' THEN ($9::text[])[a.idx]
           WHEN 'updated' THEN '{"type":"plant.updated","data":' || ${plantJsonPostgres({ id: ID, name: 'a.stored_name', tag: 'a.stored_tag' })} || '}'
           ELSE '{"type":"plant.deleted","data":' || ${deletedPlantJsonPostgres(ID)} || '}'
         END,
         'plant.' || a.outcome, ($11::text[])[a.idx], $12::bigint, $12::bigint, $12::bigint
  FROM applied a CROSS JOIN unnest($8::text[]) WITH ORDINALITY AS s(subscriber, n)
  WHERE a.outcome IN ('created', 'updated', 'deleted') AND 'plant.' || a.outcome = ANY ($13::text[])
  ORDER BY a.idx, s.n
)
SELECT idx, outcome, stored_name, stored_tag, stored_version FROM applied`;

/**
 * The PostgreSQL outbox, shared by every replica. Events are written by APPLY_WITH_EVENTS, in the plants'
 * own statement. A claim moves next_attempt_at past a lease in the same statement that picks the rows
 * (FOR UPDATE SKIP LOCKED), so two replicas never attempt one event at once; a replica that dies mid-attempt
 * leaves the event to be claimed again when its lease runs out.
 */
export class PostgresOutbox implements OutboxStore {
  constructor(
    private readonly pool: Pool,
    private readonly subscribers: readonly string[],
    private readonly leaseMs: number,
    /** WEBHOOK_EVENTS: the types written. */
    private readonly types: readonly string[] = ['plant.created'],
  ) {}

  /** $8 to $13 of APPLY_WITH_EVENTS for a batch (in the order given to plants_change). */
  eventParams(batch: readonly BatchOperation[]): unknown[] {
    const eventIds: string[] = [];
    const payloads: (string | null)[] = [];
    const contexts: (string | null)[] = [];
    for (const operation of batch) {
      const created = operation.kind === 'created' ? operation : undefined;
      const wanted = this.types.includes(`plant.${operation.kind}`);
      payloads.push(created === undefined ? null : newPlantPayload(created.plant));
      contexts.push(traceColumn(operation.trace));
      for (let i = 0; i < this.subscribers.length; i += 1) eventIds.push(wanted ? newEventId() : '');
    }
    return [this.subscribers, payloads, eventIds, contexts, Date.now(), this.types];
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
    }>(
      `UPDATE webhook_outbox SET next_attempt_at = $3
       WHERE seq IN (
         SELECT seq FROM webhook_outbox
         WHERE subscriber = $1 AND status = 'pending' AND next_attempt_at <= $2
         ORDER BY next_attempt_at, seq LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING seq, event_id, payload, event_type, attempts, created_at, trace_context`,
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
