import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WebhookObserver } from '../webhooks';

// Seconds. Sub-second steps for the healthy path (the goal is p99 under 1 s), then steps that follow the retry
// schedule (5 s, 5 min, 30 min, 2 h, …): about 27.6 hours from the first attempt to the last.
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
  let countPending: (() => Promise<number>) | undefined;
  new Gauge({
    name: 'plants_webhook_backlog_events',
    help: 'Webhook events pending in the outbox (not yet delivered, attempts left), counted at scrape time.',
    registers,
    async collect() {
      if (countPending === undefined) return;
      try {
        this.set(await countPending());
      } catch {
        // An unreadable outbox must not fail the whole scrape; NaN says "unknown" rather than a stale number.
        this.set(Number.NaN);
      }
    },
  });
  return {
    attempted: (outcome) => attempts.inc({ outcome }),
    delivered: (lagSeconds) => lag.observe(lagSeconds),
    backlogFrom: (count) => {
      countPending = count;
    },
  };
}
