import cors from 'cors';
import express, { type Express } from 'express';
import type { Store } from 'express-rate-limit';
import type { Config } from './config';
import type { Readiness } from './db/store';
import { bearerAuth, createCredentialReader } from './http/auth.middleware';
import { errorMiddleware } from './http/error.middleware';
import { allowedMethods, methodNotAllowed, notFound } from './http/fallback.handlers';
import { healthRoutes } from './http/health.routes';
import { jsonBody } from './http/json-body';
import { loadShedding } from './http/load-shed.middleware';
import type { Lifecycle } from './http/lifecycle';
import { rateLimitPerMinute } from './http/rate-limit.middleware';
import { requestLog } from './http/request-log.middleware';
import { securityHeaders } from './http/security-headers';
import type { Logger } from './logger';
import { buildOpenApiDocument } from './openapi';
import { PlantController } from './plants/plant.controller';
import type { PlantRepository } from './plants/plant.repository';
import { plantRoutes } from './plants/plant.routes';
import { PlantService } from './plants/plant.service';

export type AppDeps = {
  config: Config;
  logger: Logger;
  /** The store, whichever dialect: built by createStore (src/db/store.ts). */
  plants: PlantRepository;
  readiness: Readiness;
  lifecycle: Lifecycle;
  /** Rate-limit counters shared by the replicas (REDIS_URL); absent, each process counts its own. */
  rateLimitStore?: Store;
};

const PLANTS_ALLOW = 'POST, OPTIONS';

/** Builds the whole HTTP app from its dependencies; reads no environment and listens on nothing. */
export function createApp({ config, logger, plants, readiness, lifecycle, rateLimitStore }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);

  app.use(requestLog(logger));
  app.use(securityHeaders());
  if (config.corsOrigins.length > 0) {
    // Preflights end here with 204, before authentication: browsers send them without credentials.
    app.use(
      cors({
        origin: [...config.corsOrigins],
        methods: ['POST'],
        allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
        exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
        maxAge: 600,
      }),
    );
  }
  healthRoutes(app, { readiness, lifecycle });
  const openApiDocument = buildOpenApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  app.options('/plants', allowedMethods(PLANTS_ALLOW));

  // Health checks stay answerable under overload; everything after this line may be shed.
  if (config.loadShedLagMs > 0) app.use(loadShedding(config.loadShedLagMs));
  const readCredentials = createCredentialReader(config.authTokens);
  if (config.rateLimitPerMinute > 0) app.use(rateLimitPerMinute(config.rateLimitPerMinute, readCredentials, rateLimitStore));
  app.use(bearerAuth(readCredentials));

  const controller = new PlantController(new PlantService(plants));
  plantRoutes(app, controller, jsonBody(config.bodyLimitBytes), methodNotAllowed(PLANTS_ALLOW));

  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}
