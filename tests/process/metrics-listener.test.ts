import net from 'node:net';
import { scrape, valueOf } from '../helpers/metrics';
import { nginxAvailable, startNginx } from '../helpers/nginx';
import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { startServer } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { freePort } from '../helpers/ports';
import { sleep } from '../helpers/common';

describe('the metrics listener of the built server', () => {
  it('when METRICS_PORT and METRICS_HOST are set, then /metrics is served there and counts a create made on the public port', async () => {
    const port = await freePort();
    const server = await startServer({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' });
    try {
      const line = await server.waitForLine((entry) => entry.msg === 'metrics listening');
      const created = await rawRequest(server.url, {
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(aNewPlant()),
      });
      // The count is taken when the response closes, which may follow the client's read by a moment.
      let scraped = await scrape(`http://127.0.0.1:${port}/metrics`);
      for (let attempt = 0; attempt < 50 && valueOf(scraped, 'http_requests_in_flight') !== 0; attempt += 1) {
        await sleep(20);
        scraped = await scrape(`http://127.0.0.1:${port}/metrics`);
      }
      const elsewhere = await fetch(`http://127.0.0.1:${port}/`);

      expect(line.url).toBe(`http://127.0.0.1:${port}/metrics`);
      expect(created.status).toBe(200);
      expect(valueOf(scraped, 'http_request_duration_seconds_count', { method: 'POST', route: '/plants', status_code: '200' })).toBe(1);
      expect(elsewhere.status).toBe(404);
    } finally {
      await server.stop();
    }
  });

  it('when METRICS_PORT is 0, then no metrics listener starts', async () => {
    const server = await startServer({ METRICS_PORT: '0' });
    await rawRequest(server.url, { method: 'GET', path: '/healthz' });

    const { code } = await server.stop();

    expect(code).toBe(0);
    expect(server.lines.filter((entry) => entry.msg === 'metrics listening')).toEqual([]);
  });

  it('when the metrics port is taken, then the start fails with a fatal line naming it', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const server = await startServer({ METRICS_PORT: String(port) }, { expectListening: false });

      const { code } = await server.exited;

      expect(code).toBe(1);
      expect(server.lines.find((entry) => entry.level === 60)?.msg).toBe(`cannot serve metrics on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`);
    } finally {
      blocker.close();
    }
  });

  (nginxAvailable() ? it : it.skip)('when /metrics is asked through nginx with docker/nginx.conf, then the proxy does not reach the metrics', async () => {
    const port = await freePort();
    const server = await startServer({ METRICS_PORT: String(port) });
    const proxy = await startNginx(Number(new URL(server.url).port));
    try {
      await server.waitForLine((entry) => entry.msg === 'metrics listening');

      const response = await rawRequest(proxy.url, { method: 'GET', path: '/metrics' });
      const direct = await fetch(`http://127.0.0.1:${port}/metrics`);

      expect({ status: response.status, error: (response.body as { error?: number } | undefined)?.error }).toEqual({ status: 401, error: 40101 });
      expect(direct.status).toBe(200);
    } finally {
      await proxy.stop();
      await server.stop();
    }
  });
});
