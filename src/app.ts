import cors from 'cors';
import express, { type Express } from 'express';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { createAuth, grants, readCredentials, readLease, type StaticTokenStore } from './auth';
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
import type { PlantFeed } from './plants/plant.feed';
import type { PlantRepository } from './plants/plant.repository';
import { EVENTS_ALLOW, PLANT_ALLOW, PLANTS_ALLOW, plantRoutes } from './plants/plant.routes';
import { PlantService } from './plants/plant.service';

/** The variables the HTTP app reads; the rest of the configuration is the service's and the store's. */
export type AppConfig = Pick<Config, 'trustProxy' | 'corsOrigins' | 'docsEnabled' | 'loadShedLagMs' | 'rateLimitPerMinute' | 'bodyLimitBytes' | 'oidc'>;

export type AppDeps = {
  config: AppConfig;
  logger: Logger;
  /** The store's repository and readiness check, whatever the dialect (src/store). */
  plants: PlantRepository;
  /** The change feed GET /plants/events serves (src/store builds it over the same store). */
  feed: PlantFeed;
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
// The change stream: open for as long as its client reads, so never counted as a request waiting in line.
const EVENTS_PATH = /^\/plants\/events\/?$/i;
// Its OPTIONS routes: /plants, /plants/events and /plants/{id}. Other OPTIONS requests continue down the chain (to 401 or 404).
const PLANT_PATH = /^\/plants(?:\/[^/]+)?\/?$/i;

/** Builds the whole HTTP app from its dependencies; reads no environment and listens on nothing. */
export function createApp({ config, logger, plants, feed, readiness, lifecycle, metrics, tokens, rateLimitStore }: AppDeps): Express {
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
              methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
              // If-Match and If-None-Match: conditional edits and reads; Last-Event-ID: a fetch-based reader resuming.
              allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'If-Match', 'If-None-Match', 'Last-Event-ID'],
              // RateLimit and RateLimit-Policy (draft-8): a browser app can slow down before a 429. ETag: the
              // version a browser app sends back in If-Match.
              exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'Link', 'RateLimit', 'RateLimit-Policy', 'ETag'],
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
  publicRoutes.options('/plants/events', allowedMethods(EVENTS_ALLOW));
  publicRoutes.options('/plants/:id', allowedMethods(PLANT_ALLOW));
  app.use((req, res, next) => {
    if (req.method === 'OPTIONS' ? PLANT_PATH.test(req.path) : PUBLIC_PATH.test(req.path)) publicRoutes(req, res, next);
    else next();
  });

  // Health checks stay answerable under overload; everything after this may be shed. One router layer again.
  const auth = createAuth(config, tokens, logger);
  app.use(
    inSequence(
      ...(config.loadShedLagMs > 0 ? [loadShedding(config.loadShedLagMs, (req) => EVENTS_PATH.test(req.path))] : []),
      auth.identify,
      ...(config.rateLimitPerMinute > 0 ? [rateLimitPerMinute(config.rateLimitPerMinute, readCredentials, rateLimitStore)] : []),
      auth.authorize,
    ),
  );

  const controller = new PlantController(new PlantService(plants), feed, (req) => grants(req, 'plants:read'), readLease);
  plantRoutes(app, controller, jsonBody(config.bodyLimitBytes), methodNotAllowed);

  app.use(notFound);
  app.use(errorMiddleware(logger));
  return app;
}
