import cors from 'cors';
import express, { type Express } from 'express';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { createAuth, readCredentials, type StaticTokenStore } from './auth';
import type { Config } from './config';
import { docsRoutes } from './docs/docs.routes';
import { errorMiddleware } from './http/error.middleware';
import { allowedMethods, methodNotAllowed, notFound } from './http/fallback.handlers';
import { healthRoutes } from './http/health.routes';
import { jsonBody } from './http/json-body';
import { loadShedding } from './http/load-shed.middleware';
import { rateLimitPerMinute } from './http/rate-limit.middleware';
import { requestLog } from './http/request-log.middleware';
import { securityHeaders } from './http/security-headers';
import { inSequence } from './http/sequence';
import type { Lifecycle, Readiness } from './lifecycle';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { buildOpenApiDocument } from './openapi';
import { PlantController } from './plants/plant.controller';
import type { PlantRepository } from './plants/plant.repository';
import { PLANT_ALLOW, PLANTS_ALLOW, plantRoutes } from './plants/plant.routes';
import { PlantService } from './plants/plant.service';

/** The variables the HTTP app reads; the rest of the configuration is the service's and the store's. */
export type AppConfig = Pick<Config, 'trustProxy' | 'corsOrigins' | 'docsEnabled' | 'loadShedLagMs' | 'rateLimitPerMinute' | 'bodyLimitBytes' | 'oidc'>;

export type AppDeps = {
  config: AppConfig;
  logger: Logger;
  /** The store's repository and readiness check, whatever the dialect (src/store). */
  plants: PlantRepository;
  readiness: Readiness;
  lifecycle: Lifecycle;
  /** Absent when METRICS_PORT=0: then not one instrument runs. */
  metrics?: Metrics;
  tokens: StaticTokenStore;
  /** Rate-limit counters shared by the replicas (REDIS_URL); absent, each process counts its own. */
  rateLimitStore?: RateLimitStore;
};

// The paths publicRoutes serves, matched as Express matches routes: any case, with or without a trailing slash.
const PUBLIC_PATH = /^\/(?:healthz|readyz|openapi\.json|docs)(?:\/|$)/i;
// Its OPTIONS routes: /plants and /plants/{id}. Other OPTIONS requests continue down the chain (to 401 or 404).
const PLANT_PATH = /^\/plants(?:\/[^/]+)?\/?$/i;

/** Builds the whole HTTP app from its dependencies; reads no environment and listens on nothing. */
export function createApp({ config, logger, plants, readiness, lifecycle, metrics, tokens, rateLimitStore }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);

  // What every request goes through, as one router layer (src/http/sequence.ts): metrics, its id and log line,
  // security headers, CORS. Preflights end in CORS with 204, before authentication: browsers send them without
  // credentials.
  app.use(
    inSequence(
      ...(metrics === undefined ? [] : [metrics.http(app)]),
      requestLog(logger, config.trustProxy !== false),
      securityHeaders(),
      ...(config.corsOrigins.length > 0
        ? [
            cors({
              origin: [...config.corsOrigins],
              methods: ['GET', 'HEAD', 'POST', 'DELETE'],
              allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
              // RateLimit and RateLimit-Policy (draft-8): a browser app can slow down before a 429.
              exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'Link', 'RateLimit', 'RateLimit-Policy'],
              maxAge: 600,
            }),
          ]
        : []),
    ),
  );

  // The public routes: no token, never shed or limited. Their own router is entered only for their paths, so a
  // request for /plants skips them all in one step.
  const publicRoutes = express.Router();
  healthRoutes(publicRoutes, { readiness, lifecycle });
  const openApiDocument = buildOpenApiDocument();
  publicRoutes.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  if (config.docsEnabled) docsRoutes(publicRoutes);
  publicRoutes.options('/plants', allowedMethods(PLANTS_ALLOW));
  publicRoutes.options('/plants/:id', allowedMethods(PLANT_ALLOW));
  app.use((req, res, next) => {
    if (req.method === 'OPTIONS' ? PLANT_PATH.test(req.path) : PUBLIC_PATH.test(req.path)) publicRoutes(req, res, next);
    else next();
  });

  // Health checks stay answerable under overload; everything after this may be shed. One router layer again.
  const auth = createAuth(config, tokens, logger);
  app.use(
    inSequence(
      ...(config.loadShedLagMs > 0 ? [loadShedding(config.loadShedLagMs)] : []),
      auth.identify,
      ...(config.rateLimitPerMinute > 0 ? [rateLimitPerMinute(config.rateLimitPerMinute, readCredentials, rateLimitStore)] : []),
      auth.authorize,
    ),
  );

  const controller = new PlantController(new PlantService(plants));
  plantRoutes(app, controller, jsonBody(config.bodyLimitBytes), methodNotAllowed);

  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}
