import type { NewPlant, Plant } from './plant.schemas';

export type InsertOutcome = { created: boolean; stored: Plant };

/**
 * What PlantService needs from a store, whatever the database: SQL lives in one implementation per dialect
 * (plant.repository.sqlite.ts, …). Every method resolves only after its change is committed and durable.
 */
export type PlantRepository = {
  /**
   * Inserts the plant unless its id exists; either way answers what is stored under the id, once committed.
   * Creates for the same id that arrive together see each other in arrival order.
   */
  insertOrGet(plant: NewPlant): Promise<InsertOutcome>;
};
