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

  it('when the metrics port is taken, then the start fails with a fatal line naming METRICS_PORT and how to change it', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const server = await startServer({ METRICS_PORT: String(port) }, { expectListening: false });

      const { code } = await server.exited;

      expect(code).toBe(1);
      expect(server.lines.find((entry) => entry.level === 60)?.msg).toBe(
        `METRICS_PORT: 127.0.0.1:${port} is already in use (another process, perhaps a second instance); set METRICS_PORT to a free port, or METRICS_PORT=0 to turn metrics off`,
      );
    } finally {
      blocker.close();
    }
  });

  it('when 300 idle connections hold the metrics port under a limit of 256 descriptors, then the public port still serves health checks and creates', async () => {
    const port = await freePort();
    const server = await startServer({ METRICS_PORT: String(port), MAX_CONNECTIONS: '200' }, { fdLimit: 256 });
    const idle: net.Socket[] = [];
    try {
      await server.waitForLine((entry) => entry.msg === 'metrics listening');
      for (let i = 0; i < 300; i += 1) {
        const socket = net.connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        idle.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));

      const health = await rawRequest(server.url, { method: 'GET', path: '/healthz', timeoutMs: 3000 }).catch((error: Error) => ({ status: error.message }));
      const created = await rawRequest(server.url, {
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(aNewPlant()),
        timeoutMs: 3000,
      }).catch((error: Error) => ({ status: error.message }));
      const stillOpen = idle.filter((socket) => !socket.destroyed && socket.readyState === 'open').length;

      expect({ health: health.status, created: created.status }).toEqual({ health: 200, created: 200 });
      expect(stillOpen).toBeLessThanOrEqual(8);
    } finally {
      for (const socket of idle) socket.destroy();
      await server.stop();
    }
  });

  it('when idle connections fill the metrics listener, then they are closed after 5 s and a scrape gets through again', async () => {
    const port = await freePort();
    const server = await startServer({ METRICS_PORT: String(port) });
    const idle: net.Socket[] = [];
    try {
      await server.waitForLine((entry) => entry.msg === 'metrics listening');
      for (let i = 0; i < 8; i += 1) {
        const socket = net.connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        idle.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const during = await fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.status, () => 'refused');
      await new Promise((resolve) => setTimeout(resolve, 5500));

      const after = await fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.status, () => 'refused');

      expect({ during, after, idleClosed: idle.every((socket) => socket.destroyed || socket.readyState === 'closed') }).toEqual({ during: 'refused', after: 200, idleClosed: true });
    } finally {
      for (const socket of idle) socket.destroy();
      await server.stop();
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
