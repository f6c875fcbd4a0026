import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { nginxAvailable, startNginx } from '../helpers/nginx';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

// CI installs nginx (.ci/run); there a missing nginx is a failure, never a skip.
const haveNginx = nginxAvailable();
if (!haveNginx && process.env.CI) throw new Error('nginx is not installed; .ci/run installs it');
const describeWithNginx = haveNginx ? describe : describe.skip;
if (!haveNginx) console.warn('nginx not installed: skipping tests/process/behind-nginx.test.ts (apt-get install nginx-light)');

describeWithNginx('behind nginx with docker/nginx.conf', () => {
  let server: ServerProcess;
  let proxy: { url: string; stop: () => Promise<void> };
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };

  beforeAll(async () => {
    server = await startServer({ BODY_LIMIT: '1kb', TRUST_PROXY: '1' });
    proxy = await startNginx(Number(new URL(server.url).port));
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  it('when a plant is created through the proxy, then it answers 200 with the Plant body', async () => {
    const response = await rawRequest(proxy.url, { headers, body: JSON.stringify(aNewPlant({ name: 'proxied', tag: undefined })) });

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { name: 'proxied' } });
  });

  it('when a body is far over BODY_LIMIT, then the client gets the service 400, not a 502 or 413 from nginx', async () => {
    const body = JSON.stringify(aNewPlant({ padding: 'x'.repeat(200 * 1024) }));

    const responses = await Promise.all(Array.from({ length: 5 }, () => rawRequest(proxy.url, { headers, body })));

    for (const response of responses) {
      expect({ status: response.status, type: response.headers['content-type'], body: response.body }).toEqual({
        status: 400,
        type: 'application/json; charset=utf-8',
        body: { error: 40005, message: 'The body is larger than the 1024 bytes this service accepts.' },
      });
    }
  });

  it('when a 401 goes through the proxy, then the challenge header arrives intact', async () => {
    const response = await rawRequest(proxy.url, { headers: { 'Content-Type': 'application/json' }, body: '{}' });

    expect({ status: response.status, challenge: response.headers['www-authenticate'], body: response.body }).toEqual({
      status: 401,
      challenge: 'Bearer realm="plants"',
      body: { error: 40101, message: 'Send Authorization: Bearer <token>.' },
    });
  });

  // The client speaks from 127.0.0.2 and nginx from 127.0.0.1, so the log tells the two apart.
  it('when a client comes through nginx, then the log shows the client address, not the proxy one', async () => {
    await rawRequest(proxy.url, { headers: { ...headers, 'X-Request-Id': 'through-nginx-1' }, body: JSON.stringify(aNewPlant()), localAddress: '127.0.0.2' });

    const line = await server.waitForLine((entry) => entry.reqId === 'through-nginx-1');

    expect(line).toMatchObject({ ip: '127.0.0.2', status: 200 });
  });

  it('when a client forges X-Forwarded-For, then the log still shows the address nginx saw and keeps the request id', async () => {
    const response = await rawRequest(proxy.url, {
      headers: { ...headers, 'X-Forwarded-For': '203.0.113.66', 'X-Request-Id': 'through-nginx-2' },
      body: JSON.stringify(aNewPlant()),
      localAddress: '127.0.0.2',
    });
    const line = await server.waitForLine((entry) => entry.reqId === 'through-nginx-2');

    expect(response.headers['x-request-id']).toBe('through-nginx-2');
    expect(line).toMatchObject({ ip: '127.0.0.2', status: 200 });
  });
});
