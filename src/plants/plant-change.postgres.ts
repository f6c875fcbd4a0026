/**
 * The PostgreSQL group commit's statements, composed here because the repository owns the transaction: the
 * webhook outbox answers its events as data (plant.outbox.ts) and never sees a parameter position.
 */
import { deletedPlantJsonPostgres, plantJsonPostgres } from './plant.json';
import type { BatchEvents } from './plant.outbox';
import type { ChangeContext, Expected, PlantPatch } from './plant.repository';
import type { NewPlant } from './plant.schemas';

/** One write of a batch: a create, an edit or a delete, as plants_change takes it. */
export type ChangeOperation =
  | { kind: 'c'; id: bigint; plant: NewPlant; context?: ChangeContext }
  | { kind: 'u'; id: bigint; patch: PlantPatch; expected?: Expected; context?: ChangeContext }
  | { kind: 'd'; id: bigint; expected?: Expected; context?: ChangeContext };

/** The group commit alone: plants_change (migrations/postgres/005) with its seven parameters. */
export const CHANGE_STATEMENT = 'SELECT idx, outcome, stored_name, stored_tag, stored_version FROM plants_change($1, $2, $3, $4, $5, $6, $7)';

// An operation's plant id, in the statement below.
const ID = '($2::bigint[])[a.idx]';

/**
 * The group commit with its webhook events, in one statement and so one transaction and one round trip: $1 to $7
 * are plants_change's parameters, $8 to $16 eventParams'. The events CTE inserts each event whose operation
 * plants_change answers `created`, `updated` or `deleted`, never for an identical retry, a conflict, a stale or
 * missing edit; so a change and its events commit or roll back together, in the order the outbox listed them.
 * A create's body comes whole ($11); an edit's and a delete's is the outbox's text ($12, $13) around the plant as
 * the function stored it, in plant.json.ts's rendering for PostgreSQL (held to plantJson's bytes by
 * tests/store/plant-json.test.ts). `applied` is MATERIALIZED: plants_change runs exactly once.
 */
export const CHANGE_WITH_EVENTS = `WITH applied AS MATERIALIZED (
  ${CHANGE_STATEMENT}
), events AS (
  INSERT INTO webhook_outbox (event_id, subscriber, plant_id, payload, event_type, trace_context, next_attempt_at, created_at, updated_at)
  SELECT e.event_id, e.subscriber, ${ID},
         CASE a.outcome
           WHEN 'created' THEN ($11::text[])[a.idx]
           WHEN 'updated' THEN ($12::text[])[a.idx] || ${plantJsonPostgres({ id: ID, name: 'a.stored_name', tag: 'a.stored_tag' })} || ($13::text[])[a.idx]
           ELSE ($12::text[])[a.idx] || ${deletedPlantJsonPostgres(ID)} || ($13::text[])[a.idx]
         END,
         ($14::text[])[a.idx], ($15::text[])[a.idx], $16::bigint, $16::bigint, $16::bigint
  FROM unnest($8::int[], $9::text[], $10::text[]) WITH ORDINALITY AS e(idx, event_id, subscriber, n)
  JOIN applied a ON a.idx = e.idx
  WHERE a.outcome IN ('created', 'updated', 'deleted')
  ORDER BY e.n
)
SELECT idx, outcome, stored_name, stored_tag, stored_version FROM applied`;

/** $1 to $7 of both statements: plants_change's seven arrays for a batch, in arrival order. */
export function changeParams(batch: readonly ChangeOperation[]): unknown[] {
  return [
    batch.map((op) => op.kind),
    batch.map((op) => op.id),
    batch.map((op) => (op.kind === 'c' ? op.plant.name : op.kind === 'u' ? (op.patch.name ?? null) : null)),
    batch.map((op) => (op.kind === 'c' ? (op.plant.tag ?? null) : op.kind === 'u' ? (op.patch.tag ?? null) : null)),
    batch.map((op) => op.kind === 'u' && op.patch.tag !== undefined),
    batch.map((op) => (op.kind === 'c' || op.expected === undefined ? null : op.expected.join(','))),
    Date.now(),
  ];
}

/** $8 to $16 of CHANGE_WITH_EVENTS: the events one row each (operation, id, subscriber), then per operation its body, type and trace. */
export function eventParams({ operations, at }: BatchEvents): unknown[] {
  const operationOf: number[] = [];
  const ids: string[] = [];
  const subscribers: string[] = [];
  operations.forEach((operation, index) => {
    for (const event of operation.events) {
      operationOf.push(index + 1);
      ids.push(event.id);
      subscribers.push(event.subscriber);
    }
  });
  const whole = operations.map(({ body }) => ('whole' in body ? body.whole : null));
  const before = operations.map(({ body }) => ('whole' in body ? null : body.before));
  const after = operations.map(({ body }) => ('whole' in body ? null : body.after));
  return [operationOf, ids, subscribers, whole, before, after, operations.map((o) => o.type), operations.map((o) => o.trace), at];
}
