/**
 * The outbox port: what a plant repository calls so that a create's events commit with the plant. The plants
 * folder owns these types; src/webhooks implements them and src/store hands each repository its outbox, so the
 * repositories never load the webhook code (nor undici) themselves.
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

/** The group commit alone: plants_change (migrations/postgres/005) with its seven parameters. */
export const CHANGE_STATEMENT = 'SELECT idx, outcome, stored_name, stored_tag, stored_version FROM plants_change($1, $2, $3, $4, $5, $6, $7)';

/**
 * PostgreSQL: the group commit and its webhook events in one statement, so one transaction and one round trip.
 * `statement` takes plants_change's seven parameters as $1 to $7 and `params(batch)` after them, and answers the
 * rows CHANGE_STATEMENT answers.
 */
export type PostgresPlantOutbox = {
  statement: string;
  params(batch: readonly BatchOperation[]): unknown[];
  /** Called after a commit that changed `changed` plants: the dispatcher looks at once instead of at its next poll. */
  wake(changed: number): void;
};
