import net from 'node:net';
import { aNewPlant } from '../helpers/plants';
import { rawRequest } from '../helpers/raw-request';
import { nginxAvailable, startNginx } from '../helpers/nginx';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

// Without nginx the suite is skipped (globalSetup says so); under CI that is a failure (optional-services.ts).
const haveNginx = nginxAvailable();
const describeWithNginx = haveNginx ? describe : describe.skip;

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

describeWithNginx('nginx answers its own errors as the Error JSON', () => {
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
  let server: ServerProcess;
  let proxy: { url: string; stop: () => Promise<void> };

  beforeAll(async () => {
    server = await startServer({ TRUST_PROXY: '1' });
    proxy = await startNginx(Number(new URL(server.url).port));
  });

  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  it('when a body is over nginx client_max_body_size, then nginx answers 400 40005 as JSON', async () => {
    const response = await rawRequest(proxy.url, { headers, body: JSON.stringify(aNewPlant({ padding: 'x'.repeat(1100 * 1024) })) });

    expect({ status: response.status, type: response.headers['content-type'], body: response.body }).toEqual({
      status: 400,
      type: 'application/json',
      body: { error: 40005, message: 'The body is larger than the proxy in front of the service accepts (1 MiB).' },
    });
  });

  it('when a header is over nginx large_client_header_buffers, then nginx answers 431 43101 as JSON', async () => {
    const response = await rawRequest(proxy.url, { method: 'GET', path: '/healthz', headers: { 'X-Big': 'b'.repeat(10 * 1024) } });

    expect({ status: response.status, type: response.headers['content-type'], body: response.body }).toEqual({
      status: 431,
      type: 'application/json',
      body: { error: 43101, message: 'The request line and headers are larger than the service accepts.' },
    });
  });

  it('when the service is down, then nginx answers 503 50302 as JSON with Retry-After', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const downProxy = await startNginx(port);

    const response = await rawRequest(downProxy.url, { headers, body: JSON.stringify(aNewPlant()) });
    await downProxy.stop();

    expect({ status: response.status, retryAfter: response.headers['retry-after'], type: response.headers['content-type'], body: response.body }).toEqual({
      status: 503,
      retryAfter: '1',
      type: 'application/json',
      body: { error: 50302, message: 'The service is not reachable (restarting or shutting down); retry later.' },
    });
  });

  it('when the service does not answer within proxy_read_timeout, then nginx answers 503 50303 as JSON', async () => {
    const silent = net.createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const slowProxy = await startNginx((silent.address() as net.AddressInfo).port, [['proxy_read_timeout 35s;', 'proxy_read_timeout 1s;']]);

    const response = await rawRequest(slowProxy.url, { headers, body: JSON.stringify(aNewPlant()) });
    await slowProxy.stop();
    silent.close();

    expect({ status: response.status, retryAfter: response.headers['retry-after'], body: response.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: 50303, message: 'The service did not answer in time; retry after the number of seconds in Retry-After.' },
    });
  });
});
