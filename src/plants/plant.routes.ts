import type { Express, RequestHandler } from 'express';
import type { PlantController } from './plant.controller';

export const PLANTS_ALLOW = 'GET, HEAD, POST, OPTIONS';
export const PLANT_ALLOW = 'GET, HEAD, DELETE, OPTIONS';

// Registered on the app itself, not a sub-router: a router adds a matching pass to every request.
// Express answers HEAD with the GET route, headers and no body.
export function plantRoutes(
  app: Express,
  controller: PlantController,
  readBody: RequestHandler,
  methodNotAllowed: (allow: string) => RequestHandler,
): void {
  app.post('/plants', readBody, controller.create);
  app.get('/plants', controller.list);
  app.delete('/plants', controller.deleteWithoutId);
  app.all('/plants', methodNotAllowed(PLANTS_ALLOW));
  app.get('/plants/:id', controller.get);
  app.delete('/plants/:id', controller.delete);
  app.all('/plants/:id', methodNotAllowed(PLANT_ALLOW));
}
