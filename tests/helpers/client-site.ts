import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';

const CLIENT_DIST = path.resolve(__dirname, '..', '..', 'clients', 'typescript', 'dist', 'index.js');

/**
 * A front end on another origin: another port of 127.0.0.1 serving `page` at `/` and the built client, bundled for
 * the browser, at `/client.js`, so every call the page makes to the service is cross-origin.
 */
export async function serveClientPage(page: string): Promise<{ origin: string; close(): Promise<void> }> {
  const bundle = await build({ entryPoints: [CLIENT_DIST], bundle: true, format: 'esm', platform: 'browser', write: false });
  const script = bundle.outputFiles[0]?.text ?? '';
  const site = http.createServer((req, res) => {
    if (req.url === '/client.js') res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script);
    else if (req.url === '/') res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(site.address() as AddressInfo).port}`,
    close: async () => {
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
    },
  };
}
