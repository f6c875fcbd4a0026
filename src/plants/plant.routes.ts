import type { ErrorRequestHandler, Express, RequestHandler } from 'express';
import type { RouteKit } from '../resource';
import type { PlantController } from './plant.controller';

export const PLANTS_ALLOW = 'GET, HEAD, POST, OPTIONS';
export const PLANT_ALLOW = 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS';
export const EVENTS_ALLOW = 'GET, HEAD, OPTIONS';
export const BATCH_ALLOW = 'POST, OPTIONS';

// An id segment holding a `%`: the only ones whose decoding can fail. Case-insensitive and with an optional
// trailing slash, as Express matches '/plants/:id'.
const MALFORMED_CANDIDATE = /^\/plants\/[^/]*%[^/]*\/?$/i;

// Registered on the app itself, not a sub-router: a router adds a matching pass to every request.
// Express answers HEAD with the GET route, headers and no body.
// `idempotent` (Idempotency-Key) runs after the body is read: its bytes are part of what makes two requests the same;
// `taken` after the controller, for a write whose key another process holds.
export function plantRoutes(
  app: Express,
  controller: PlantController,
  { readBody, readBatchBody, methodNotAllowed }: RouteKit,
  { idempotent, taken }: { idempotent: RequestHandler; taken: ErrorRequestHandler },
): void {
  app.post('/plants', readBody, idempotent, controller.create, taken);
  app.get('/plants', controller.list);
  app.put('/plants', controller.withoutId);
  app.patch('/plants', controller.withoutId);
  app.delete('/plants', controller.withoutId);
  app.all('/plants', methodNotAllowed(PLANTS_ALLOW));
  // Before the :id routes: Express decodes :id while matching and throws a bare URIError on bad percent-encoding.
  // This path has no capture group, so nothing is decoded before the controller names the parameter at fault.
  app.all(MALFORMED_CANDIDATE, controller.rejectMalformedId);
  // Before /plants/:id, which would read `events` and `batch` as ids.
  app.get('/plants/events', controller.events);
  app.all('/plants/events', methodNotAllowed(EVENTS_ALLOW));
  app.post('/plants/batch', readBatchBody, idempotent, controller.batch, taken);
  app.all('/plants/batch', methodNotAllowed(BATCH_ALLOW));
  app.get('/plants/:id', controller.get);
  app.put('/plants/:id', readBody, idempotent, controller.put, taken);
  app.patch('/plants/:id', readBody, idempotent, controller.update, taken);
  app.delete('/plants/:id', idempotent, controller.delete, taken);
  app.all('/plants/:id', methodNotAllowed(PLANT_ALLOW));
}
