import type { TraceContext } from '../tracing';
import type { ListQuery, NewPlant, Plant } from './plant.schemas';

export type InsertOutcome = { created: boolean; stored: Plant };

/** A plant as the store holds it: the Plant shape plus its int64 id. */
export type StoredPlant = { id: bigint; name: string; tag?: string };

/**
 * Reads come back as the JSON text a response carries, ids written digit for digit: SQLite writes it in C
 * (json_object), with no row object or bigint per plant (docs/decisions.md, reads).
 */
export type PlantsPage = {
  /** A JSON array of StoredPlant, `tag` left out where there is none. */
  json: string;
  /** The page's last id when more plants follow it (for the same tag, when given): where the next page starts. */
  nextAfter?: bigint;
};

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
  /** The plant's JSON text (a StoredPlant), or undefined when no plant has the id. */
  findById(id: bigint): Promise<string | undefined>;
  /** Ascending id, ids greater than `after` when given, only `tag` when given, at most `limit` plants. */
  list(query: ListQuery): Promise<PlantsPage>;
  /**
   * Resolves after the delete is committed and fsynced: true when a plant was deleted, false when none had the id.
   * Deletes and creates that arrive together apply in arrival order.
   */
  delete(id: bigint): Promise<boolean>;
};
