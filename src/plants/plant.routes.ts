import express, { type RequestHandler, type Router } from 'express';
import type { PlantController } from './plant.controller';

export function plantRoutes(controller: PlantController, readBody: RequestHandler[], methodNotAllowed: RequestHandler): Router {
  const router = express.Router();
  router.post('/plants', ...readBody, controller.create);
  router.all('/plants', methodNotAllowed);
  return router;
}
