/**
 * The outbox port: what a plant repository calls so that a create's events commit with the plant. The plants
 * folder owns these types; src/webhooks implements them and src/store hands each repository its outbox, so the
 * repositories never load the webhook code (nor undici) themselves.
 */
import type { TraceContext } from '../tracing';
import type { NewPlant } from './plant.schemas';

/** SQLite: called inside the create's transaction, once per plant actually inserted; writes one event per subscriber. */
export type PlantOutbox = { recordCreated(plant: NewPlant, trace?: TraceContext): void };

/** One operation of a PostgreSQL batch as the outbox sees it: a create (its plant and trace) or a delete (undefined). */
export type BatchCreate = { plant: NewPlant; trace?: TraceContext } | undefined;

/**
 * PostgreSQL: the group commit and its events in one statement, so one transaction and one round trip.
 * `statement` takes plants_apply's four arrays as $1 to $4 and `params(batch)` after them, and answers the rows
 * plants_apply answers.
 */
export type PostgresPlantOutbox = {
  statement: string;
  params(batch: readonly BatchCreate[]): unknown[];
  /** Called after a commit that created `created` plants: the dispatcher looks at once instead of at its next poll. */
  wake(created: number): void;
};
