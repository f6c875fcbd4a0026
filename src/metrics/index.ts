/**
 * Prometheus metrics: owns the registry, the HTTP, store and webhook instruments and the separate listener that
 * serves them. It only observes: it never changes a response, never throws into a request, and never listens on the
 * public port (no token in scrape configs, nothing readable through the proxy).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Express, RequestHandler } from 'express';
import { catalogue } from '../errors';
import type { BackupObserver } from '../backup/scheduler';
import type { FeedObserver } from '../plants/plant.feed';
import type { StoreObserver } from '../plants/store-observer';
import { localsOf } from '../request-locals';
import type { WebhookObserver } from '../webhooks';
import { backupMetrics } from './backup-metrics';
import { feedMetrics } from './feed-metrics';
import { routeTemplate } from './route-template';
import { webhookMetrics } from './webhook-metrics';

export { METRICS_MAX_CONNECTIONS, serveMetrics, type MetricsServer } from './metrics.server';

export type Metrics = {
  registry: Registry;
  /** The first middleware of the app: times every request and counts its outcome when the response closes. */
  http: (app: Express) => RequestHandler;
  store: StoreObserver;
  webhooks: WebhookObserver;
  backups: BackupObserver;
  feed: FeedObserver;
};

// Seconds. The service answers in milliseconds; the tail buckets catch drains, timeouts and overload.
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const COMMIT_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const BATCH_ROWS_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

// A PostgreSQL SQLSTATE: five characters, of which the first two are the class. No class starts with E, so an
// errno (EPIPE) is never read as one.
const SQLSTATE = /^[0-9A-DF-Z][0-9A-Z]{4}$/;

/**
 * The driver's code: SQLITE_BUSY, …; PostgreSQL's SQLSTATE by class (SQLSTATE_57 operator intervention, which holds
 * the statement timeout; SQLSTATE_08 connection; SQLSTATE_53 resources; …), so the label stays a short list; an
 * errno (ECONNREFUSED, ETIMEDOUT, …) as it is.
 */
function storeErrorKind(error: unknown): string {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  if (typeof code === 'string') return SQLSTATE.test(code) ? `SQLSTATE_${code.slice(0, 2)}` : code;
  return typeof name === 'string' ? name : 'unknown';
}

/** A registry of its own per call (tests build many apps in one process), with Node's runtime defaults. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request reaching the app to its response closing, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const inFlight = new Gauge({ name: 'http_requests_in_flight', help: 'Requests received and not yet answered.', registers });
  const errors = new Counter({
    name: 'plants_error_responses_total',
    help: 'Error responses by catalogue code and cause (the error table in docs/api.md).',
    labelNames: ['code', 'cause'] as const,
    registers,
  });
  const shed = new Counter({ name: 'plants_requests_shed_total', help: 'Requests shed with 503 because requests were queueing: 64 or more in progress, each of the 64 oldest waiting past LOAD_SHED_LAG_MS.', registers });
  const rateLimited = new Counter({ name: 'plants_requests_rate_limited_total', help: 'Requests refused with 429 (RATE_LIMIT_PER_MINUTE).', registers });
  const authFailed = new Counter({
    name: 'plants_auth_failures_total',
    help: 'Requests refused by authentication or authorization (401, 403), by cause.',
    labelNames: ['cause'] as const,
    registers,
  });
  const batchRows = new Histogram({
    name: 'plants_store_commit_batch_rows',
    help: 'Rows per group commit (creates that shared one transaction and one fsync).',
    buckets: BATCH_ROWS_BUCKETS,
    registers,
  });
  const commitSeconds = new Histogram({
    name: 'plants_store_commit_duration_seconds',
    help: 'Time of one group commit, transaction and fsync, in seconds.',
    buckets: COMMIT_SECONDS_BUCKETS,
    registers,
  });
  const storeErrors = new Counter({
    name: 'plants_store_errors_total',
    help: 'Commits the store failed as a whole, by driver error code (SQLITE_BUSY, SQLITE_FULL, …).',
    labelNames: ['kind'] as const,
    registers,
  });

  // Codes are looked up, not listed: a row another branch adds to the catalogue is counted without an edit here.
  const causeOf = new Map<number, string>(Object.entries(catalogue).map(([cause, row]) => [row.code, cause]));

  const http = (app: Express): RequestHandler => {
    const route = routeTemplate(app);
    return (req, res, next) => {
      const started = performance.now();
      inFlight.inc();
      // 'close' comes once per response: `on` spares the once-wrapper, as in the request log.
      res.on('close', () => {
        inFlight.dec();
        // A client that left before any byte of the answer has no status: a label of its own, not a false 200.
        const status = res.headersSent ? res.statusCode : 'aborted';
        duration.observe({ method: req.method, route: route(req), status_code: status }, (performance.now() - started) / 1000);
        const code = localsOf(res).errorCode;
        if (code === undefined) return;
        const cause = causeOf.get(code) ?? 'unknown';
        errors.inc({ code, cause });
        if (cause === 'overloaded') shed.inc();
        else if (cause === 'rate_limited') rateLimited.inc();
        else if (res.statusCode === 401 || res.statusCode === 403) authFailed.inc({ cause });
      });
      next();
    };
  };

  const store: StoreObserver = {
    committed: (rows, seconds) => {
      batchRows.observe(rows);
      commitSeconds.observe(seconds);
    },
    failed: (error) => storeErrors.inc({ kind: storeErrorKind(error) }),
  };

  return { registry, http, store, webhooks: webhookMetrics(registers), backups: backupMetrics(registers), feed: feedMetrics(registers) };
}
