import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type HttpProxy = { url: string; close: () => Promise<void> };

/** Where a request goes upstream, with which headers; undefined: the proxy answers a plain 404 itself. */
export type Route = (req: http.IncomingMessage) => { path: string; headers: http.IncomingHttpHeaders } | undefined;

/** A reverse proxy in front of `upstream` that forwards each request as `route` rewrites it, answers unchanged. */
export async function startHttpProxy(upstream: string, route: Route): Promise<HttpProxy> {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const routed = route(req);
    if (routed === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('outside the prefix\n');
      return;
    }
    const forward = http.request({ host: target.hostname, port: target.port, method: req.method, path: routed.path, headers: { ...routed.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A reverse proxy that serves the upstream under a path prefix and strips it on the way in, as a gateway
 * mounting the service at /some/prefix does. Anything outside the prefix gets a plain 404 from the proxy.
 */
export function startPrefixProxy(upstream: string, prefix: string): Promise<HttpProxy> {
  return startHttpProxy(upstream, (req) => {
    const url = req.url ?? '/';
    return url.startsWith(`${prefix}/`) ? { path: url.slice(prefix.length), headers: req.headers } : undefined;
  });
}
