import type { Express, RequestHandler } from 'express';
import type { PlantController } from './plant.controller';

// Registered on the app itself, not a sub-router: a router adds a matching pass to every request.
export function plantRoutes(app: Express, controller: PlantController, readBody: RequestHandler, methodNotAllowed: RequestHandler): void {
  app.post('/plants', readBody, controller.create);
  app.all('/plants', methodNotAllowed);
}
