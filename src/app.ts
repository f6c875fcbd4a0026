import cors from 'cors';
import express, { type Express } from 'express';
import { createAuth, readCredentials, type StaticTokenStore } from './auth';
import type { Config } from './config';
import type { Db } from './db/database';
import { docsRoutes } from './docs/docs.routes';
import type { Migration } from './db/migrate';
import { SqliteHealth } from './db/sqlite-health';
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
import { SqlitePlantRepository } from './plants/plant.repository.sqlite';
import { PLANT_ALLOW, PLANTS_ALLOW, plantRoutes } from './plants/plant.routes';
import { PlantService } from './plants/plant.service';
import type { PlantOutbox } from './webhooks';

export type AppDeps = {
  config: Config;
  logger: Logger;
  db: Db;
  migrations: readonly Migration[];
  lifecycle: Lifecycle;
  /** Absent when METRICS_PORT=0: then not one instrument runs. */
  metrics?: Metrics;
  tokens: StaticTokenStore;
  /** Where new plants are announced to webhook subscribers; absent when none is configured. */
  outbox?: PlantOutbox;
};

/** Builds the whole HTTP app from its dependencies; reads no environment and listens on nothing. */
export function createApp({ config, logger, db, migrations, lifecycle, metrics, tokens, outbox }: AppDeps): Express {
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
  const storeHealth = new SqliteHealth(db, logger, config.databaseBusyTimeoutMs);
  healthRoutes(app, { db, migrations, lifecycle, storeHealth });
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
  if (config.rateLimitPerMinute > 0) app.use(rateLimitPerMinute(config.rateLimitPerMinute, readCredentials));
  app.use(auth.authorize);

  const controller = new PlantController(new PlantService(new SqlitePlantRepository(db, logger, storeHealth, metrics?.store, outbox)));
  plantRoutes(app, controller, jsonBody(config.bodyLimitBytes), methodNotAllowed);

  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}
