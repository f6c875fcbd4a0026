import { AppError } from '../errors';
import type { PlantRepository } from './plant.repository';
import type { NewPlant, Plant } from './plant.schemas';

export class PlantService {
  constructor(private readonly plants: PlantRepository) {}

  /** The id is the key: the identical plant again is a safe retry, anything else under that id a conflict. */
  async create(plant: NewPlant): Promise<Plant> {
    const { created, stored } = await this.plants.insertOrGet(plant);
    if (!created && (stored.name !== plant.name || stored.tag !== plant.tag)) {
      throw new AppError(
        'id_conflict',
        `id: ${plant.id} already belongs to a plant with another name or tag; use a new id, or resend that plant exactly.`,
      );
    }
    return stored;
  }
}
