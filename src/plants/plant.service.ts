import { AppError } from '../errors';
import type { CreateContext, PlantRepository, StoredPlant } from './plant.repository';
import type { NewPlant, Plant } from './plant.schemas';

/** One page of plants, and the id to continue after when more follow. */
export type PlantPage = { plants: StoredPlant[]; nextAfter?: bigint };

const notFound = (id: bigint) => new AppError('plant_not_found', `id: no plant has id ${id}.`);

export class PlantService {
  constructor(private readonly plants: PlantRepository) {}

  /** The id is the key: the identical plant again is a safe retry, anything else under that id a conflict. */
  async create(plant: NewPlant, context?: CreateContext): Promise<Plant> {
    const { created, stored } = await this.plants.insertOrGet(plant, context);
    if (!created && (stored.name !== plant.name || stored.tag !== plant.tag)) {
      throw new AppError(
        'id_conflict',
        `id: ${plant.id} already belongs to a plant with another name or tag; use a new id, or resend that plant exactly.`,
      );
    }
    return stored;
  }

  async get(id: bigint): Promise<StoredPlant> {
    const plant = await this.plants.findById(id);
    if (plant === undefined) throw notFound(id);
    return plant;
  }

  /** Asks for one row more than the page: when it comes back, another page follows. */
  async list(query: { limit: number; after?: bigint; tag?: string }): Promise<PlantPage> {
    const plants = await this.plants.list({ ...query, limit: query.limit + 1 });
    if (plants.length <= query.limit) return { plants };
    plants.length = query.limit;
    return { plants, nextAfter: (plants[query.limit - 1] as StoredPlant).id };
  }

  async delete(id: bigint): Promise<void> {
    if (!(await this.plants.delete(id))) throw notFound(id);
  }
}
