import path from 'node:path';
import { scrape, valueOf } from '../helpers/metrics';
import { aNewPlant } from '../helpers/plants';
import { freePort } from '../helpers/ports';
import { rawRequest } from '../helpers/raw-request';
import { startServer, tempDataDir } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { closedPort, startReceiver, WEBHOOK_SECRET } from '../helpers/webhook-receiver';
import { sleep } from '../helpers/common';

/** The built server's environment: its own SQLite file in a fresh folder (kept across its restarts), one subscriber. */
const serverEnv = (url: string, extra: Record<string, string> = {}) => ({
  DATABASE_URL: `file:${path.join(tempDataDir(), 'plants.db')}`,
  WEBHOOK_URLS: url,
  WEBHOOK_SECRET,
  ...extra,
});

const create = (url: string, plant: Record<string, unknown>) =>
  rawRequest(url, { headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(plant) });

describe('webhooks across restarts of the server process', () => {
  it('when the process is killed with SIGKILL after the 200 and before delivery, then the restarted one delivers it', async () => {
    // The receiver holds the first attempt unanswered, so the kill surely lands before any 2xx was seen.
    let hang = true;
    const hooks = await startReceiver({ answer: () => (hang ? 'hang' : 200) });
    const env = serverEnv(hooks.url, { WEBHOOK_RETRY_SCHEDULE: '1h' });
    const first = await startServer(env);
    const plant = aNewPlant();

    const response = await create(first.url, plant);
    await hooks.waitFor((all) => all.length === 1);
    first.child.kill('SIGKILL');
    const killed = await first.exited;
    hang = false;
    const second = await startServer(env);
    await hooks.waitFor((all) => all.length === 2);
    await sleep(500);
    await second.stop();
    await hooks.close();

    expect(response.status).toBe(200);
    expect(killed.signal).toBe('SIGKILL');
    expect(hooks.deliveries).toEqual([
      expect.objectContaining({ body: JSON.stringify(plant), verified: true }),
      expect.objectContaining({ id: hooks.deliveries[0]?.id, body: JSON.stringify(plant), verified: true }),
    ]);
  });

  it('when the process is killed with SIGKILL right after the 200 while the subscriber is down, then the restarted one delivers it', async () => {
    const port = await closedPort();
    const env = serverEnv(`http://127.0.0.1:${port}/hooks`, { WEBHOOK_RETRY_SCHEDULE: '300ms' });
    const first = await startServer(env);
    const plant = aNewPlant();

    const response = await create(first.url, plant);
    first.child.kill('SIGKILL');
    await first.exited;
    const hooks = await startReceiver({ port });
    const second = await startServer(env);
    await hooks.waitFor((all) => all.length >= 1);
    await sleep(800);
    await second.stop();
    await hooks.close();

    expect(response.status).toBe(200);
    expect(hooks.deliveries).toEqual([expect.objectContaining({ body: JSON.stringify(plant), verified: true })]);
  });

  it('when SIGTERM arrives with deliveries in flight, then they finish, it exits 0, and a restart delivers nothing twice', async () => {
    const hooks = await startReceiver({ answer: () => sleep(400).then(() => 200) });
    const env = serverEnv(hooks.url, { WEBHOOK_CONNECTIONS: '4' });
    const first = await startServer(env);
    const plants = Array.from({ length: 12 }, () => aNewPlant());

    const statuses = await Promise.all(plants.map(async (plant) => (await create(first.url, plant)).status));
    await hooks.waitFor((all) => all.length >= 4);
    const exit = await first.stop('SIGTERM');
    const beforeRestart = hooks.deliveries.length;
    const second = await startServer(env);
    await hooks.waitFor((all) => all.length >= 12, 15_000);
    await sleep(1000);
    await second.stop();
    await hooks.close();

    const bodies = hooks.deliveries.map((delivery) => delivery.body).sort();
    expect(statuses).toEqual(Array(12).fill(200));
    expect(exit).toEqual({ code: 0, signal: null });
    expect(beforeRestart).toBeGreaterThanOrEqual(4);
    expect(beforeRestart).toBeLessThan(12);
    expect(bodies).toEqual(plants.map((plant) => JSON.stringify(plant)).sort());
    expect(new Set(hooks.deliveries.map((delivery) => delivery.id)).size).toBe(12);
    expect(hooks.deliveries.every((delivery) => delivery.verified === true)).toBe(true);
  });

  it('when an attempt outlives SHUTDOWN_TIMEOUT_MS, then the process still stops and the event goes out after the next start', async () => {
    let hang = true;
    const hooks = await startReceiver({ answer: () => (hang ? 'hang' : 200) });
    const env = serverEnv(hooks.url, { SHUTDOWN_TIMEOUT_MS: '500' });
    const first = await startServer(env);
    const plant = aNewPlant();

    await create(first.url, plant);
    await hooks.waitFor((all) => all.length === 1);
    const started = Date.now();
    const exit = await first.stop('SIGTERM');
    const stoppedIn = Date.now() - started;
    hang = false;
    const second = await startServer(env);
    await hooks.waitFor((all) => all.length === 2);
    await second.stop();
    await hooks.close();

    expect(exit.code).toBe(0);
    expect(stoppedIn).toBeLessThan(3000);
    expect(first.lines.some((line) => line.msg === 'webhook attempts unfinished at the drain deadline; left pending for the next start')).toBe(true);
    expect(hooks.deliveries.map((delivery) => delivery.body)).toEqual([JSON.stringify(plant), JSON.stringify(plant)]);
    expect(hooks.deliveries[1]?.id).toBe(hooks.deliveries[0]?.id);
  });

  it('when a traced create is delivered by the built server, then the delivery carries the trace and its metrics count the attempt and the lag', async () => {
    const hooks = await startReceiver();
    const metricsPort = await freePort();
    const server = await startServer({ WEBHOOK_URLS: hooks.url, WEBHOOK_SECRET, METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' });
    try {
      await server.waitForLine((entry) => entry.msg === 'metrics listening');

      const response = await rawRequest(server.url, {
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        },
        body: JSON.stringify(aNewPlant()),
      });
      const [delivery] = await hooks.waitFor((all) => all.length === 1);
      let scraped = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      for (let attempt = 0; attempt < 50 && valueOf(scraped, 'plants_webhook_backlog_events') !== 0; attempt += 1) {
        await sleep(50);
        scraped = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      }

      expect(response.status).toBe(200);
      expect(delivery?.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$/);
      expect({
        delivered: valueOf(scraped, 'plants_webhook_attempts_total', { outcome: 'delivered' }),
        backlog: valueOf(scraped, 'plants_webhook_backlog_events'),
        lagCount: valueOf(scraped, 'plants_webhook_delivery_lag_seconds_count'),
      }).toEqual({ delivered: 1, backlog: 0, lagCount: 1 });
    } finally {
      await server.stop();
      await hooks.close();
    }
  });
});
