import { AppError } from '../errors';
import type { CreateContext, PlantRepository, PlantsPage } from './plant.repository';
import type { ListQuery, NewPlant, Plant } from './plant.schemas';

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

  /** The plant's JSON text. */
  async get(id: bigint): Promise<string> {
    const plant = await this.plants.findById(id);
    if (plant === undefined) throw notFound(id);
    return plant;
  }

  /** One page of plants as JSON text, and the id to continue after when more follow. */
  list(query: ListQuery): Promise<PlantsPage> {
    return this.plants.list(query);
  }

  async delete(id: bigint): Promise<void> {
    if (!(await this.plants.delete(id))) throw notFound(id);
  }
}
