import cors from 'cors';
import express, { type Express } from 'express';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { createAuth, readCredentials, type StaticTokenStore } from './auth';
import type { Config } from './config';
import type { Readiness } from './db/store';
import { docsRoutes } from './docs/docs.routes';
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
import type { Metrics } from './metrics';
import { buildOpenApiDocument } from './openapi';
import { PlantController } from './plants/plant.controller';
import type { PlantRepository } from './plants/plant.repository';
import { PLANT_ALLOW, PLANTS_ALLOW, plantRoutes } from './plants/plant.routes';
import { PlantService } from './plants/plant.service';

export type AppDeps = {
  config: Config;
  logger: Logger;
  /** The store's repository and readiness check, whatever the dialect (src/db/store.ts). */
  plants: PlantRepository;
  readiness: Readiness;
  lifecycle: Lifecycle;
  /** Absent when METRICS_PORT=0: then not one instrument runs. */
  metrics?: Metrics;
  tokens: StaticTokenStore;
  /** Rate-limit counters shared by the replicas (REDIS_URL); absent, each process counts its own. */
  rateLimitStore?: RateLimitStore;
};

/** Builds the whole HTTP app from its dependencies; reads no environment and listens on nothing. */
export function createApp({ config, logger, plants, readiness, lifecycle, metrics, tokens, rateLimitStore }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);

  if (metrics !== undefined) app.use(metrics.http(app));
  app.use(requestLog(logger));
  app.use(securityHeaders());
  if (config.corsOrigins.length > 0) {
    // Preflights end here with 204, before authentication: browsers send them without credentials.
    app.use(
      cors({
        origin: [...config.corsOrigins],
        methods: ['GET', 'HEAD', 'POST', 'DELETE'],
        allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
        exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'Link'],
        maxAge: 600,
      }),
    );
  }
  healthRoutes(app, { readiness, lifecycle });
  const openApiDocument = buildOpenApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  if (config.docsEnabled) docsRoutes(app);
  app.options('/plants', allowedMethods(PLANTS_ALLOW));
  app.options('/plants/:id', allowedMethods(PLANT_ALLOW));

  // Health checks stay answerable under overload; everything after this line may be shed.
  if (config.loadShedLagMs > 0) app.use(loadShedding(config.loadShedLagMs));
  const auth = createAuth(config, tokens, logger);
  app.use(auth.identify);
  if (config.rateLimitPerMinute > 0) app.use(rateLimitPerMinute(config.rateLimitPerMinute, readCredentials, rateLimitStore));
  app.use(auth.authorize);

  const controller = new PlantController(new PlantService(plants));
  plantRoutes(app, controller, jsonBody(config.bodyLimitBytes), methodNotAllowed);

  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}
