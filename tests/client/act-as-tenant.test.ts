import { createClient, newPlantId } from '../../clients/typescript/src/index';
import { appForAll } from '../helpers/fixtures';
import { startHttpProxy, type HttpProxy } from '../helpers/http-proxy';
import { startTestApp, TOKEN } from '../helpers/test-app';

type Recorder = HttpProxy & { seen: { method: string; path: string; tenant: string | undefined }[] };

/**
 * A reverse proxy in front of the test service that notes each request's Act-As-Tenant and forwards it without
 * that header: what the service does with it is the auth suites' subject (tests/api), which needs tenants on; here
 * the subject is what the client sends, with real answers coming back.
 */
async function recordingProxy(upstream: string): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const proxy = await startHttpProxy(upstream, (req) => {
    const { 'act-as-tenant': tenant, ...headers } = req.headers;
    seen.push({ method: req.method ?? '', path: (req.url ?? '').replace(/\?.*/, ''), tenant: tenant as string | undefined });
    return { path: req.url ?? '/', headers };
  });
  return { ...proxy, seen };
}

describe('createClient({ tenant }): an operator acting in a named tenant', () => {
  const app = appForAll();
  let proxy: Recorder;

  beforeAll(async () => {
    proxy = await recordingProxy(app.url);
  });

  afterAll(() => proxy?.close());

  it('when a tenant is named, then every call and the change stream carry Act-As-Tenant with the name percent-encoded', async () => {
    const client = createClient({ baseUrl: proxy.url, token: TOKEN, tenant: 'Zoë & co/1' });
    const id = newPlantId();
    const abort = new AbortController();
    proxy.seen.length = 0;

    await client.createPlant({ id, name: 'Tenant fern' });
    await client.getPlant(id);
    await client.updatePlant(id, { tag: 'shade' });
    await client.listPlants({ count: true });
    await client.batch([{ op: 'delete', id }]);
    for await (const change of client.changes({ signal: abort.signal })) {
      if (change.type === 'open') abort.abort();
    }

    expect(proxy.seen.map(({ method, path }) => `${method} ${path}`)).toEqual(['POST /plants', 'GET /plants/' + id, 'PATCH /plants/' + id, 'GET /plants', 'POST /plants/batch', 'GET /plants/events']);
    expect(new Set(proxy.seen.map((request) => request.tenant))).toEqual(new Set(['Zo%C3%AB%20%26%20co%2F1']));
  });

  it('when no tenant is named, then no call carries the header', async () => {
    const client = createClient({ baseUrl: proxy.url, token: TOKEN });
    proxy.seen.length = 0;

    await client.listPlants({});

    expect(proxy.seen).toEqual([{ method: 'GET', path: '/plants', tenant: undefined }]);
  });

  it('when a page on a listed origin asks before sending the header, then the service allows it (CORS)', async () => {
    const cors = await startTestApp({ CORS_ORIGINS: 'http://app.test' });
    try {
      const answer = await fetch(`${cors.url}/plants`, {
        method: 'OPTIONS',
        headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization,act-as-tenant' },
      });

      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toContain('act-as-tenant');
    } finally {
      await cors.close();
    }
  });
});
