/**
 * The webhook events of a PostgreSQL batch (plant.write.postgres.ts): the CTE of its one statement that writes
 * them, each with its change's tenant, and its arguments, from the rows the outbox port answers (src/webhooks
 * writes them; no SQL crosses). SQL and parameters only.
 */
import type { ChangeOutboxRows, OutboxRow } from '../change-outbox';
import type { TenantKey } from '../tenant';
import type { TraceContext } from '../tracing';
import { changeEntry } from './plant.outbox';
import type { Decision } from './plant.write-rule';

/** How many parameters the CTE takes, in webhookParams' order. */
export const WEBHOOK_ARGUMENTS = 8;

/**
 * The batch's webhook events, parameters from `$first`, written only when plants_write wrote (applied is
 * MATERIALIZED: it runs once), in the order the outbox listed them (seq follows that order).
 */
export function outboxCte(first: number): string {
  const $ = (index: number) => `$${first + index}`;
  return `outbox AS (
  INSERT INTO webhook_outbox (tenant, event_id, subscriber, plant_id, payload, event_type, trace_context, next_attempt_at, created_at, updated_at)
  SELECT w.tenant, w.event_id, w.subscriber, w.plant_id, w.payload, w.event_type, w.trace, ${$(7)}::bigint, ${$(7)}::bigint, ${$(7)}::bigint
  FROM applied, unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[], ${$(3)}::bigint[], ${$(4)}::text[], ${$(5)}::text[], ${$(6)}::text[])
    WITH ORDINALITY AS w(tenant, event_id, subscriber, plant_id, payload, event_type, trace, n)
  WHERE applied.base IS NOT NULL
  ORDER BY w.n
)`;
}

/**
 * The CTE's arguments: the outbox rows of the batch's changes (plant.outbox.ts writes each change's entry), each
 * in its change's tenant, then their time. The outbox is asked a change at a time, so each row is known to be its
 * change's whether or not the outbox copies the tenant itself.
 */
export function webhookParams(changes: readonly { tenant: TenantKey; decision: Decision; trace?: TraceContext }[], outbox: ChangeOutboxRows, at: number): unknown[] {
  const rows: OutboxRow[] = [];
  for (const { tenant, decision, trace } of changes) {
    const entry = changeEntry(decision, trace);
    if (entry === undefined) continue;
    entry.tenant = tenant;
    for (const row of outbox.rowsOf([entry])) rows.push({ ...row, tenant });
  }
  return [
    rows.map((row) => row.tenant),
    rows.map((row) => row.eventId),
    rows.map((row) => row.subscriber),
    rows.map((row) => row.subject),
    rows.map((row) => row.payload),
    rows.map((row) => row.type),
    rows.map((row) => row.trace),
    at,
  ];
}
