import type { Request, Response } from 'express';
import type { z } from 'zod';
import { AppError } from '../errors';
import type { PlantService } from './plant.service';
import { newPlantSchema } from './plant.schemas';

const describe = (error: z.ZodError) =>
  error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');

export class PlantController {
  constructor(private readonly service: PlantService) {}

  create = async (req: Request, res: Response): Promise<void> => {
    const parsed = newPlantSchema.safeParse(req.body);
    if (!parsed.success) throw new AppError('invalid_field', describe(parsed.error));
    const plant = await this.service.create(parsed.data);
    // The Plant body: name and tag as stored, tag left out when absent, never the id.
    res.json(plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag });
  };
}
