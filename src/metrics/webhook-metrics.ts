import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WebhookBacklog, WebhookObserver } from '../webhooks';

// Seconds. Sub-second steps for the healthy path (the goal is p99 under 1 s), then steps that follow the retry
// schedule (5 s, 5 min, 30 min, 2 h, …): about 27.6 hours from the first attempt to the last.
// Reads closer together than this are one scrape's.
const SCRAPE_READ_MS = 100;
const UNKNOWN: WebhookBacklog = { events: Number.NaN, oldestCreatedAt: undefined, limit: Number.NaN };

const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 21600, 86400, 172800];

/** The webhook instruments, fed by the dispatcher through the observer it is given. */
export function webhookMetrics(registers: Registry[]): WebhookObserver {
  const attempts = new Counter({
    name: 'plants_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered, failed_status, timeout, refused, error.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const lag = new Histogram({
    name: 'plants_webhook_delivery_lag_seconds',
    help: "Time from an event's commit (with its plant) to the subscriber's 2xx, retries included, in seconds.",
    buckets: LAG_BUCKETS,
    registers,
  });
  let readBacklog: (() => Promise<WebhookBacklog>) | undefined;
  // One read of the outbox per scrape, shared by the gauges below (prom-client collects them one after another).
  let lastRead: { at: number; backlog: Promise<WebhookBacklog | undefined> } | undefined;
  const backlog = (): Promise<WebhookBacklog | undefined> => {
    const now = Date.now();
    if (lastRead === undefined || now - lastRead.at > SCRAPE_READ_MS) {
      // An unreadable outbox must not fail the whole scrape; NaN says "unknown" rather than a stale number.
      lastRead = { at: now, backlog: readBacklog === undefined ? Promise.resolve(undefined) : readBacklog().catch(() => UNKNOWN) };
    }
    return lastRead.backlog;
  };
  new Gauge({
    name: 'plants_webhook_backlog_events',
    help: 'Webhook events pending in the outbox (not yet delivered, attempts left), counted at scrape time.',
    registers,
    // Every worker reads the one outbox: merged across workers (src/supervisor), the count is one worker's, not their sum.
    aggregator: 'max',
    async collect() {
      this.set((await backlog())?.events ?? 0);
    },
  });
  new Gauge({
    name: 'plants_webhook_backlog_oldest_seconds',
    help: 'Age of the oldest pending webhook event (since its commit with the plant), in seconds; 0 with none pending.',
    registers,
    aggregator: 'max',
    async collect() {
      const read = await backlog();
      const oldest = read?.oldestCreatedAt;
      this.set(read === UNKNOWN ? Number.NaN : oldest === undefined ? 0 : Math.max(0, Date.now() - oldest) / 1000);
    },
  });
  new Gauge({
    name: 'plants_webhook_delivery_limit',
    help: 'Attempts one subscriber may have under way at once now: WEBHOOK_CONNECTIONS with slack, less while creates saturate the event loop.',
    registers,
    async collect() {
      const read = await backlog();
      if (read !== undefined) this.set(read.limit);
    },
  });
  return {
    attempted: (outcome) => attempts.inc({ outcome }),
    delivered: (lagSeconds) => lag.observe(lagSeconds),
    backlogFrom: (read) => {
      readBacklog = read;
    },
  };
}
