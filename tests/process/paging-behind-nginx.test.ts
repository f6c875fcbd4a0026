import { withTimes } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { nginxAvailable, startNginx } from '../helpers/nginx';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

// Without nginx the suite is skipped (globalSetup says so); under CI that is a failure (optional-services.ts).
const haveNginx = nginxAvailable();
const describeWithNginx = haveNginx ? describe : describe.skip;

describeWithNginx('reads and deletes behind nginx with docker/nginx.conf', () => {
  let server: ServerProcess;
  let proxy: { url: string; origin: string; stop: () => Promise<void> };
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
  const ids = [11, 12, 13, 14, 15];

  beforeAll(async () => {
    server = await startServer({ TRUST_PROXY: '1' });
    proxy = await startNginx(Number(new URL(server.url).port));
    for (const id of ids) await rawRequest(proxy.url, { headers, body: JSON.stringify({ id, name: `Proxied ${id}` }) });
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  it('when the next link is followed verbatim from the proxy origin, then it walks every plant under /api', async () => {
    const seen: unknown[] = [];
    const links: string[] = [];
    let url: string | undefined = `${proxy.url}/plants?limit=2`;

    while (url !== undefined) {
      const response = await rawRequest(url, { method: 'GET', path: '', headers });
      expect(response.status).toBe(200);
      seen.push(...(response.body as unknown[]));
      const link = /^<([^>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1];
      if (link !== undefined) links.push(link);
      // As a browser on the proxy's origin follows it: the path-absolute target, against the origin.
      url = link === undefined ? undefined : new URL(link, proxy.origin).href;
    }

    expect(seen).toEqual(ids.map((id) => withTimes({ id, name: `Proxied ${id}` })));
    expect(links).toEqual(['/api/plants?limit=2&after=12', '/api/plants?limit=2&after=14']);
  });

  it('when a plant is deleted through the proxy, then it answers 204 and a fetch then answers 404', async () => {
    const deleted = await rawRequest(proxy.url, { method: 'DELETE', path: '/plants/15', headers });
    const fetched = await rawRequest(proxy.url, { method: 'GET', path: '/plants/15', headers });

    expect([deleted.status, deleted.body, fetched.status, fetched.body]).toEqual([204, undefined, 404, { error: 40402, message: 'id: no plant has id 15.' }]);
  });
});
