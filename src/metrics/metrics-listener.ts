import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export type MetricsServer = { url: string; close: () => Promise<void> };

// A scraper or two (a Prometheus pair, someone's curl) at a time. Past this Node closes a new connection on
// accept, so idle connections to this port, which needs no token, cannot take the descriptors the public port
// lives on (1,100 of them used to lock it out under the default limit of 1,024).
export const METRICS_MAX_CONNECTIONS = 8;
// A scrape takes milliseconds; a connection silent this long (never a request, or idle after one) is closed,
// so the few slots come free again. Prometheus opens a new connection when its keep-alive one is gone.
export const METRICS_IDLE_TIMEOUT_MS = 5_000;

/** What to tell an operator when the listener cannot start: the variable, and how to change it or turn it off. */
function listenError(error: NodeJS.ErrnoException, where: { host: string; port: number }): Error {
  const at = `${where.host}:${where.port}`;
  const fix = 'set METRICS_PORT to a free port, or METRICS_PORT=0 to turn metrics off';
  if (error.code === 'EADDRINUSE') return new Error(`METRICS_PORT: ${at} is already in use (another process, perhaps a second instance); ${fix}`, { cause: error });
  return new Error(`METRICS_PORT: cannot listen on ${at} (${error.code ?? error.message}); ${fix}, or METRICS_HOST to an address of this host`, { cause: error });
}

/**
 * The scrape listener: GET /metrics in the Prometheus text format, nothing else. Its own server, so the public
 * port, the proxy and the token never meet it; capped and timed out on its own, so it cannot starve that port.
 */
export async function serveMetrics(registry: Pick<Registry, 'metrics' | 'contentType'>, where: { host: string; port: number }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here.\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`metrics collection failed: ${String(error)}\n`);
      },
    );
  });
  server.maxConnections = METRICS_MAX_CONNECTIONS;
  // Socket inactivity (a connection that never sends a byte included), then the slow-client limits.
  server.timeout = METRICS_IDLE_TIMEOUT_MS;
  server.keepAliveTimeout = METRICS_IDLE_TIMEOUT_MS;
  server.headersTimeout = METRICS_IDLE_TIMEOUT_MS;
  server.requestTimeout = METRICS_IDLE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, where)));
    server.listen({ host: where.host, port: where.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
