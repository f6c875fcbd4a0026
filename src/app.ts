import cors from 'cors';
import express, { type Express, type Request } from 'express';
import type { Store as RateLimitStore } from 'express-rate-limit';
import { createAuth, grants, readCredentials, readLease, type Access, type StaticTokenStore } from './auth';
import type { Config } from './config';
import { docsRoutes } from './docs/docs.routes';
import { errorMiddleware } from './http/error.middleware';
import { allowedMethods, methodNotAllowed, notFound } from './http/fallback.handlers';
import { healthRoutes } from './http/health.routes';
import { jsonBody } from './http/json-body.middleware';
import { loadShedding } from './http/load-shed.middleware';
import { rateLimitPerMinute } from './http/rate-limit.middleware';
import { requestLog } from './http/request-log.middleware';
import { securityHeaders } from './http/security-headers.middleware';
import { inSequence } from './http/sequence';
import type { Lifecycle, Readiness } from './lifecycle';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { buildOpenApiDocument } from './openapi';
import type { Mounted, RouteKit } from './resource';
import { SHARED_TENANT, type TenantKey } from './tenant';
import { localsOf } from './request-locals';

/** The variables the HTTP app reads; the rest of the configuration is the service's and the store's. */
export type AppConfig = Pick<Config, 'trustProxy' | 'corsOrigins' | 'docsEnabled' | 'loadShedLagMs' | 'rateLimitPerMinute' | 'bodyLimitBytes' | 'batchBodyLimitBytes' | 'oidc'>;

export type AppDeps = {
  config: AppConfig;
  logger: Logger;
  /** The registered resources, each with its parts over the store (src/store builds them, whatever the dialect). */
  resources: readonly Mounted[];
  /** The scopes a token may grant and the one each request needs, from the resources (src/resources.ts). */
  access: Access;
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

/** Whether a path matches one of the patterns; with one pattern, that pattern's own test. */
function anyOf(patterns: readonly RegExp[]): (path: string) => boolean {
  const [only] = patterns;
  if (patterns.length === 1 && only !== undefined) return (path) => only.test(path);
  return (path) => patterns.some((pattern) => pattern.test(path));
}

/** What a browser app on a listed origin may send and read (CORS_ORIGINS names the origins). */
const CORS = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  // If-Match and If-None-Match: conditional edits and reads; Last-Event-ID: a fetch-based reader resuming;
  // Prefer: count=exact on GET /plants.
  // Idempotency-Key: a write a browser app may retry safely; Act-As-Tenant: an operator's tenant (docs/auth.md).
  allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'If-Match', 'If-None-Match', 'Last-Event-ID', 'Prefer', 'Idempotency-Key', 'Act-As-Tenant'],
  // RateLimit and RateLimit-Policy (draft-8): a browser app can slow down before a 429. ETag: the
  // version a browser app sends back in If-Match; Location: where a PUT created a plant. X-Total-Count, Preference-Applied and Feed-Position: a
  // list's count and the feed position it was read at (GET /plants).
  exposedHeaders: [
    'X-Request-Id',
    'Retry-After',
    'WWW-Authenticate',
    'Link',
    'RateLimit',
    'RateLimit-Policy',
    'ETag',
    'Location',
    'X-Total-Count',
    'Preference-Applied',
    'Feed-Position',
    'Idempotent-Replayed',
  ],
  maxAge: 600,
};

/** Who a request is for what it keeps per caller (Idempotency-Key): the static token's or the JWT's identity. */
function callerKey(req: Request): string {
  const credentials = readCredentials(req);
  return credentials.kind === 'valid' ? credentials.rateKey : 'anonymous';
}

/** The tenant auth decided for the request (src/auth sets it on res.locals); the shared one when it set none. */
function tenantOfRequest(req: Request): TenantKey {
  return (req.res === undefined ? undefined : localsOf(req.res).tenant) ?? SHARED_TENANT;
}

/** Builds the whole HTTP app from its dependencies; reads no environment and listens on nothing. */
export function createApp({ config, logger, resources, access, readiness, lifecycle, metrics, tokens, rateLimitStore }: AppDeps): Express {
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
            cors({ origin: [...config.corsOrigins], ...CORS }),
          ]
        : []),
    ),
  );

  // The public routes: no token, never shed or limited. Their own router is entered only for their paths, so a
  // request for a resource skips them all in one step.
  const publicRoutes = express.Router();
  healthRoutes(publicRoutes, { readiness, lifecycle });
  const openApiDocument = buildOpenApiDocument(resources.map(({ resource }) => resource));
  publicRoutes.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  if (config.docsEnabled) docsRoutes(publicRoutes);
  // Each resource's OPTIONS answers; other OPTIONS requests continue down the chain (to 401 or 404).
  for (const { resource } of resources) for (const { path, allow } of resource.options) publicRoutes.options(path, allowedMethods(allow));
  const resourcePath = anyOf(resources.map(({ resource }) => resource.paths));
  app.use((req, res, next) => {
    if (req.method === 'OPTIONS' ? resourcePath(req.path) : PUBLIC_PATH.test(req.path)) publicRoutes(req, res, next);
    else next();
  });

  // Health checks stay answerable under overload; everything after this may be shed. One router layer again.
  const auth = createAuth(config, tokens, logger, access);
  // Change streams: open for as long as their clients read, so never counted as requests waiting in line.
  const stream = anyOf(resources.flatMap(({ resource }) => (resource.streams === undefined ? [] : [resource.streams])));
  const limiter = config.rateLimitPerMinute > 0 ? rateLimitPerMinute(config.rateLimitPerMinute, readCredentials, rateLimitStore) : undefined;
  app.use(
    inSequence(
      ...(config.loadShedLagMs > 0 ? [loadShedding(config.loadShedLagMs, (req) => stream(req.path))] : []),
      auth.identify,
      ...(limiter === undefined ? [] : [limiter.middleware]),
      auth.authorize,
    ),
  );

  const kit: RouteKit = {
    readBody: jsonBody(config.bodyLimitBytes),
    readBatchBody: jsonBody(config.batchBodyLimitBytes),
    methodNotAllowed,
    grants,
    leaseOf: readLease,
    charge: limiter === undefined ? () => Promise.resolve() : limiter.charge,
    callerOf: callerKey,
    tenantOf: tenantOfRequest,
  };
  for (const { parts } of resources) parts.routes(app, kit);

  app.use(notFound(resources.flatMap(({ resource }) => resource.served)));
  app.use(errorMiddleware(logger));
  return app;
}
