import type { Express, RequestHandler } from 'express';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { catalogue } from '../errors';
import { localsOf } from '../request-locals';
import { routeTemplate } from './route-template';

// Seconds. The service answers in milliseconds; the tail buckets catch drains, timeouts and overload.
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The HTTP instruments, and the middleware that times every request and counts its outcome when the response closes. */
export function httpMetrics(registers: Registry[]): (app: Express) => RequestHandler {
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

  // Codes are looked up, not listed: a row another branch adds to the catalogue is counted without an edit here.
  const causeOf = new Map<number, string>(Object.entries(catalogue).map(([cause, row]) => [row.code, cause]));

  return (app: Express): RequestHandler => {
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
}
