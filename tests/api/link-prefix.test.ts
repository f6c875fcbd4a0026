import net from 'node:net';
import { uniqueId, withTimes } from '../helpers/plants';
import { appForAll } from '../helpers/fixtures';
import { bearer, postPlant, TOKEN, type TestApp } from '../helpers/test-app';

// The plants of this file carry their own tag, so each page holds only them.
const TAG = `link-${uniqueId()}`;

async function withPlants(app: TestApp): Promise<number[]> {
  const ids = [uniqueId(), uniqueId(), uniqueId()];
  for (const id of ids) await postPlant(app, { id, name: `Linked ${id}`, tag: TAG });
  return ids;
}

/** One request with exactly this request target, as a proxy or an attacker may write it. */
function rawGet(url: string, target: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('GET /plants next link behind a proxy that trusts its hop (TRUST_PROXY=1)', () => {
  const app = appForAll({ TRUST_PROXY: '1' });
  let ids: number[];

  beforeAll(async () => {
    ids = await withPlants(app);
  });

  const page = (prefix: string) => app.request.get(`/plants?limit=1&tag=${TAG}`).set({ ...bearer(), 'X-Forwarded-Prefix': prefix });

  it.each(['/api', '/api/', '/plant-store/v1'])('when the prefix is %s, then the link is the prefixed path-absolute target', async (prefix) => {
    const response = await page(prefix);

    const base = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
    expect({ status: response.status, link: response.headers.link }).toEqual({ status: 200, link: `<${base}/plants?limit=1&after=${ids[0]}&tag=${TAG}>; rel="next"` });
  });

  it('when the prefixed link is followed against the proxy origin, then it names the next page', async () => {
    const first = await page('/api');

    const next = new URL(/^<([^>]+)>/.exec(String(first.headers.link))?.[1] ?? '', 'http://proxy.example/api/plants');
    const second = await app.request.get(`${next.pathname.replace(/^\/api/, '')}${next.search}`).set(bearer());

    expect({ host: next.host, path: next.pathname, body: second.body }).toEqual({ host: 'proxy.example', path: '/api/plants', body: [withTimes({ id: ids[1], name: `Linked ${ids[1]}`, tag: TAG })] });
  });

  it.each(['//evil.example', '//evil.example/api', 'http://evil.example/api', 'api', '/a/../b', '/a/./b', '/a,/b', '/a b', '/%zz'])(
    'when the prefix is %s (not a plain path), then it is ignored',
    async (prefix) => {
      const response = await page(prefix);

      expect({ status: response.status, link: response.headers.link }).toEqual({ status: 200, link: `</plants?limit=1&after=${ids[0]}&tag=${TAG}>; rel="next"` });
    },
  );

  it('when the request target is in absolute form with another host, then the link carries only the path', async () => {
    const text = await rawGet(app.url, `http://evil.example/plants?limit=1&tag=${TAG}`);

    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(/^link: (.*)$/im.exec(text)?.[1]).toBe(`</plants?limit=1&after=${ids[0]}&tag=${TAG}>; rel="next"`);
  });
});

describe('GET /plants next link when the hop is not trusted (TRUST_PROXY unset)', () => {
  const app = appForAll();
  let ids: number[];

  beforeAll(async () => {
    ids = await withPlants(app);
  });

  it('when a client sends X-Forwarded-Prefix, then the link ignores it', async () => {
    const response = await app.request.get(`/plants?limit=1&tag=${TAG}`).set({ ...bearer(), 'X-Forwarded-Prefix': '/api' });

    expect({ status: response.status, link: response.headers.link }).toEqual({ status: 200, link: `</plants?limit=1&after=${ids[0]}&tag=${TAG}>; rel="next"` });
  });

  it('when the request target is in absolute form with another host, then the link carries only the path', async () => {
    const text = await rawGet(app.url, `http://evil.example/plants?limit=2&tag=${TAG}`);

    expect(/^link: (.*)$/im.exec(text)?.[1]).toBe(`</plants?limit=2&after=${ids[1]}&tag=${TAG}>; rel="next"`);
  });
});
