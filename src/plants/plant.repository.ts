import type { TraceContext } from '../http/trace-context';
import type { NewPlant, Plant } from './plant.schemas';

export type InsertOutcome = { created: boolean; stored: Plant };

/** A plant as the store holds it: the Plant shape plus its int64 id. */
export type StoredPlant = { id: bigint; name: string; tag?: string };

/** Where a create came from, for what it sets off: the caller's W3C trace, continued by its webhook deliveries. */
export type CreateContext = { trace?: TraceContext };

/**
 * What PlantService needs from a store, whatever the database: SQL lives in one implementation per dialect
 * (plant.repository.sqlite.ts, …). Every method resolves only after its change is committed and durable.
 */
export type PlantRepository = {
  /**
   * Inserts the plant unless its id exists; either way answers what is stored under the id, once committed.
   * Creates for the same id that arrive together see each other in arrival order. A store that writes webhook
   * events stores `context.trace` with the plant's events (the outbox's trace_context), when given.
   */
  insertOrGet(plant: NewPlant, context?: CreateContext): Promise<InsertOutcome>;
  findById(id: bigint): Promise<StoredPlant | undefined>;
  /** Ascending id, ids greater than `after` when given, only `tag` when given, at most `limit` rows. */
  list(query: { limit: number; after?: bigint; tag?: string }): Promise<StoredPlant[]>;
  /**
   * Resolves after the delete is committed and fsynced: true when a plant was deleted, false when none had the id.
   * Deletes and creates that arrive together apply in arrival order.
   */
  delete(id: bigint): Promise<boolean>;
};
