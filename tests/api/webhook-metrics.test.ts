import { bucketsOf, family, scrape, valueOf, type Scrape } from '../helpers/metrics';
import { aNewPlant } from '../helpers/plants';
import { postPlant, type TestApp } from '../helpers/test-app';
import { dispatchers } from '../helpers/test-workers';
import { closedPort } from '../helpers/webhook-receiver';
import { perTest } from '../helpers/fixtures';
import { sleep } from '../helpers/common';

const LAG_BUCKETS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '300', '1800', '7200', '21600', '86400', '172800', '+Inf'];
const OUTCOMES = ['delivered', 'failed_status', 'timeout', 'refused', 'error'];

// The delivery limit is the replica's: the sum over the workers whose dispatcher runs.
const sending = dispatchers();

const fixtures = perTest();
const receiver = fixtures.receiver;
// Metrics on: the instruments under test live on the metrics listener.
const appWith = (urls: string, extra: Record<string, string> = {}) => fixtures.appWith(urls, { METRICS_PORT: '9464', ...extra });

/** Scrapes until `ready` holds (the dispatcher counts and settles in the background), or gives the last scrape. */
async function scrapeWhen(app: TestApp, ready: (scraped: Scrape) => boolean, timeoutMs = 8000): Promise<Scrape> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const scraped = await scrape(app.metricsUrl ?? '');
    if (ready(scraped) || Date.now() > deadline) return scraped;
    await sleep(50);
  }
}

/** The attempt counters that exist, by outcome: an outcome never seen has no series. */
function attemptsByOutcome(scraped: Scrape): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of OUTCOMES) {
    const value = valueOf(scraped, 'plants_webhook_attempts_total', { outcome });
    if (value !== undefined) counts[outcome] = value;
  }
  return counts;
}

describe('webhook metrics on the metrics listener', () => {
  it('when one event is delivered at once and another after a 500, then attempts count by outcome, the backlog is 0 and the lag histogram holds both', async () => {
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? 500 : 200) });
    const app = await appWith(hooks.url);

    expect((await postPlant(app, aNewPlant())).status).toBe(200);
    await hooks.waitFor((all) => all.length === 2);
    expect((await postPlant(app, aNewPlant())).status).toBe(200);
    await hooks.waitFor((all) => all.length === 3);
    // On a loaded machine the pace may have halved the limit while the creates ran; idle windows double it back.
    const scraped = await scrapeWhen(
      app,
      (s) =>
        valueOf(s, 'plants_webhook_backlog_events') === 0 &&
        valueOf(s, 'plants_webhook_delivery_lag_seconds_count') === 2 &&
        valueOf(s, 'plants_webhook_delivery_limit') === 64 * sending,
    );

    expect(attemptsByOutcome(scraped)).toEqual({ delivered: 2, failed_status: 1 });
    expect(valueOf(scraped, 'plants_webhook_backlog_events')).toBe(0);
    expect(valueOf(scraped, 'plants_webhook_backlog_oldest_seconds')).toBe(0);
    expect(valueOf(scraped, 'plants_webhook_delivery_limit')).toBe(64 * sending);
    expect(family(scraped, 'plants_webhook_backlog_oldest_seconds').type).toBe('GAUGE');
    expect(family(scraped, 'plants_webhook_delivery_limit').type).toBe('GAUGE');
    expect(family(scraped, 'plants_webhook_attempts_total').type).toBe('COUNTER');
    expect(family(scraped, 'plants_webhook_backlog_events').type).toBe('GAUGE');
    expect(family(scraped, 'plants_webhook_delivery_lag_seconds').type).toBe('HISTOGRAM');
    const buckets = bucketsOf(scraped, 'plants_webhook_delivery_lag_seconds');
    expect(buckets.map(([le]) => le)).toEqual(LAG_BUCKETS);
    expect(buckets.at(-1)).toEqual(['+Inf', 2]);
    // The retried event waited out its 100 ms (±20%) delay: its lag runs from the commit, not from the last attempt.
    expect(buckets.find(([le]) => le === '0.05')?.[1]).toBeLessThanOrEqual(1);
    const sum = valueOf(scraped, 'plants_webhook_delivery_lag_seconds_sum') ?? 0;
    expect(sum).toBeGreaterThanOrEqual(0.08);
    expect(sum).toBeLessThan(10);
  });

  it('when subscribers refuse, hang past the timeout or reset the connection, then each outcome is counted and the backlog holds every pending event', async () => {
    const down = await closedPort();
    const hanging = await receiver({ answer: () => 'hang' });
    const resetting = await receiver({ answer: () => 'reset' });
    const app = await appWith(`http://127.0.0.1:${down}/hooks,${hanging.url},${resetting.url}`, {
      WEBHOOK_RETRY_SCHEDULE: '30s',
      WEBHOOK_CONNECTIONS: '1',
      WEBHOOK_TIMEOUT_MS: '100',
    });

    const statuses = await Promise.all(Array.from({ length: 3 }, async () => (await postPlant(app, aNewPlant())).status));
    const scraped = await scrapeWhen(
      app,
      (s) => valueOf(s, 'plants_webhook_attempts_total', { outcome: 'timeout' }) === 3 && valueOf(s, 'plants_webhook_attempts_total', { outcome: 'error' }) === 3,
    );

    expect(statuses).toEqual([200, 200, 200]);
    // The down subscriber is dialed once: its circuit opens and its other events wait for the probe, a second later.
    // Once per dispatcher: each has its own circuit (every worker's on PostgreSQL at several workers).
    const { refused, ...others } = attemptsByOutcome(scraped);
    expect(others).toEqual({ timeout: 3, error: 3 });
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(sending);
    expect(valueOf(scraped, 'plants_webhook_backlog_events')).toBe(9);
    const oldest = valueOf(scraped, 'plants_webhook_backlog_oldest_seconds') ?? 0;
    expect(oldest).toBeGreaterThan(0);
    expect(oldest).toBeLessThan(30);
    expect(valueOf(scraped, 'plants_webhook_delivery_limit')).toBe(sending);
    expect(valueOf(scraped, 'plants_webhook_delivery_lag_seconds_count')).toBe(0);
    expect(hanging.deliveries).toHaveLength(3);
    expect(resetting.deliveries).toHaveLength(3);
  });

  it('when no webhook is configured, then the backlog reads 0 and no attempt is counted', async () => {
    const app = await fixtures.app({ METRICS_PORT: '9464' });

    expect((await postPlant(app, aNewPlant())).status).toBe(200);
    const scraped = await scrape(app.metricsUrl ?? '');

    expect(attemptsByOutcome(scraped)).toEqual({});
    expect(valueOf(scraped, 'plants_webhook_backlog_events')).toBe(0);
    expect(valueOf(scraped, 'plants_webhook_backlog_oldest_seconds')).toBe(0);
  });
});
