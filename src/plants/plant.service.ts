import { AppError } from '../errors';
import type { ChangeContext, Expected, FoundPlant, PlantPatch, PlantRepository, PlantsPage, StoredPlant } from './plant.repository';
import type { NewPlant, Plant } from './plant.schemas';
import type { PlantListQuery } from './plant.list-query';

const notFound = (id: bigint) => new AppError('plant_not_found', `id: no plant has id ${id}.`);
const stale = (id: bigint, version: bigint) =>
  new AppError('precondition_failed', `If-Match: plant ${id} has changed (its ETag is now "${version}"); nothing was changed. GET it again, then retry with its new ETag.`);

/** A plant and its version: the ETag of the response that carries it. */
export type Versioned<T> = { plant: T; version: bigint };

export class PlantService {
  constructor(private readonly plants: PlantRepository) {}

  /**
   * The id is the key: the plant as stored again is a safe retry, anything else under that id a conflict. A
   * create replayed after an edit differs from what is stored, so it is a conflict too and changes nothing.
   */
  async create(plant: NewPlant, context?: ChangeContext): Promise<Versioned<Plant>> {
    const { outcome, stored, version } = await this.plants.create(plant, context);
    if (outcome === 'conflict') {
      throw new AppError(
        'id_conflict',
        `id: ${plant.id} already belongs to a plant with another name or tag (or it was edited since); use a new id, or GET it to see what is stored.`,
      );
    }
    return { plant: stored, version };
  }

  /** The plant's JSON text and version. */
  async get(id: bigint): Promise<FoundPlant> {
    const plant = await this.plants.findById(id);
    if (plant === undefined) throw notFound(id);
    return plant;
  }

  /** One page of plants as JSON text, where the next starts when more follow, the feed position and the count. */
  list(query: PlantListQuery): Promise<PlantsPage> {
    return this.plants.list(query);
  }

  /**
   * A patch that leaves the plant as it is writes nothing (the store answers `unchanged`: a version that changes
   * nothing is noise in every feed); its answer is the plant as stored, with the version it has, after the same
   * 404 and If-Match checks as a write. The store decides all of it in the commit, so racing writes meet exactly
   * one winner.
   */
  async update(id: bigint, patch: PlantPatch, expected?: Expected, context?: ChangeContext): Promise<Versioned<StoredPlant>> {
    const outcome = await this.plants.update(id, patch, expected, context);
    if (outcome.outcome === 'missing') throw notFound(id);
    if (outcome.outcome === 'stale') throw stale(id, outcome.version);
    return { plant: outcome.stored, version: outcome.version };
  }

  async delete(id: bigint, expected?: Expected, context?: ChangeContext): Promise<void> {
    const { outcome } = await this.plants.delete(id, expected, context);
    if (outcome === 'missing') throw notFound(id);
    if (outcome === 'stale') throw new AppError('precondition_failed', `If-Match: plant ${id} has changed since that ETag; nothing was deleted. GET it again, then retry with its new ETag.`);
  }
}
