/**
 * Prometheus metrics: owns the registry, the HTTP, store and webhook instruments and the separate listener that
 * serves them. It only observes: it never changes a response, never throws into a request, and never listens on the
 * public port (no token in scrape configs, nothing readable through the proxy).
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Express, RequestHandler } from 'express';
import type { BackupObserver } from '../backup/scheduler';
import type { FeedObserver, StoreObserver } from '../observers';
import type { WebhookObserver } from '../webhooks';
import { backupMetrics } from './backup-metrics';
import { feedMetrics } from './feed-metrics';
import { httpMetrics } from './http-metrics';
import { storeMetrics } from './store-metrics';
import { webhookMetrics } from './webhook-metrics';

export { METRICS_MAX_CONNECTIONS, serveMetrics, type MetricsServer } from './metrics-listener';

export type Metrics = {
  registry: Registry;
  /** The first middleware of the app: times every request and counts its outcome when the response closes. */
  http: (app: Express) => RequestHandler;
  store: StoreObserver;
  webhooks: WebhookObserver;
  backups: BackupObserver;
  feed: FeedObserver;
};

/** A registry of its own per call (tests build many apps in one process), with Node's runtime defaults. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // Instruments register in this order, which is the order /metrics lists them in.
  const http = httpMetrics(registers);
  const store = storeMetrics(registers);
  return { registry, http, store, webhooks: webhookMetrics(registers), backups: backupMetrics(registers), feed: feedMetrics(registers) };
}
