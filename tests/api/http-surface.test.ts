import { aNewPlant } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { ofAWorker, perProcess } from '../helpers/test-workers';

describe('health, readiness, headers and logs', () => {
  const app = appForAll();

  it('when /healthz and /readyz are called without a token, then both answer 200', async () => {
    const health = await app.request.get('/healthz');
    const ready = await app.request.get('/readyz');

    expect([health.status, health.body, ready.status, ready.body]).toEqual([200, { status: 'ok' }, 200, { status: 'ready' }]);
  });

  perProcess('it sets app.lifecycle.shuttingDown, the service\'s state in the jest process').it('when the process is shutting down, then /readyz answers 503 while /healthz stays 200', async () => {
    app.lifecycle.shuttingDown = true;
    const ready = await app.request.get('/readyz');
    const health = await app.request.get('/healthz');
    app.lifecycle.shuttingDown = false;

    expect({ status: ready.status, retryAfter: ready.headers['retry-after'], body: ready.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: 50302, message: 'The service is shutting down; retry on another instance or later.' },
    });
    expect(health.status).toBe(200);
  });

  it('when a response goes out, then helmet headers are on it and X-Powered-By is not', async () => {
    const response = await postPlant(app, aNewPlant());

    expect(response.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'content-security-policy': expect.stringContaining("default-src 'self'"),
      'strict-transport-security': expect.stringContaining('max-age='),
    });
    expect(response.headers['x-powered-by']).toBeUndefined();
  });

  it('when the client sends a well-formed X-Request-Id, then it comes back and is in the log line', async () => {
    const response = await postPlant(app, aNewPlant(), { 'X-Request-Id': 'front-end.42:abc_DEF-1' });

    expect(response.headers['x-request-id']).toBe('front-end.42:abc_DEF-1');
    expect(app.logs.filter((line) => line.reqId === 'front-end.42:abc_DEF-1')).toHaveLength(1);
  });

  it.each([
    ['has spaces', 'two words'],
    ['is too long', 'x'.repeat(129)],
    ['has a newline-like escape', 'a%0d%0ab'],
  ])('when the X-Request-Id %s, then a generated id replaces it', async (_case, id) => {
    const response = await postPlant(app, aNewPlant(), { 'X-Request-Id': id });

    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('when a request is answered, then exactly one log line has method, path, status, duration, id, address and caller', async () => {
    const response = await app.request.post('/plants?debug=1').set({ ...bearer(), 'Content-Type': 'application/json' }).send('{"id": "x"}');
    const reqId = response.headers['x-request-id'];

    const lines = app.logs.filter((line) => line.reqId === reqId);

    expect(lines).toEqual([
      {
        level: 30,
        time: expect.any(Number),
        msg: 'request',
        reqId,
        method: 'POST',
        path: '/plants',
        status: 400,
        error: 40006,
        caller: 'token:1',
        ms: expect.any(Number),
        ip: '127.0.0.1',
        ...ofAWorker(),
      },
    ]);
  });
});

describe('CORS', () => {
  const app = appForAll({ CORS_ORIGINS: 'https://app.example.com,http://localhost:5173' });

  it('when a listed origin sends a preflight without credentials, then it answers 204 with the allowed headers', async () => {
    const response = await app.request
      .options('/plants')
      .set({ Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' });

    expect({ status: response.status, ...pick(response.headers, ['access-control-allow-origin', 'access-control-allow-headers', 'access-control-allow-methods']) }).toEqual({
      status: 204,
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-headers': 'Authorization,Content-Type,X-Request-Id,If-Match,If-None-Match,Last-Event-ID,Prefer,Idempotency-Key,Act-As-Tenant',
      'access-control-allow-methods': 'GET,HEAD,POST,PUT,PATCH,DELETE',
    });
  });

  it('when a listed origin preflights a DELETE of one plant, then the method is allowed', async () => {
    const response = await app.request
      .options('/plants/42')
      .set({ Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'DELETE', 'Access-Control-Request-Headers': 'authorization' });

    expect({ status: response.status, ...pick(response.headers, ['access-control-allow-origin', 'access-control-allow-methods']) }).toEqual({
      status: 204,
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'GET,HEAD,POST,PUT,PATCH,DELETE',
    });
  });

  it('when a listed origin posts, then the response allows that origin and exposes the request id', async () => {
    const response = await postPlant(app, aNewPlant(), { Origin: 'http://localhost:5173' });

    expect(response.status).toBe(200);
    expect(pick(response.headers, ['access-control-allow-origin', 'access-control-expose-headers'])).toEqual({
      'access-control-allow-origin': 'http://localhost:5173',
      'access-control-expose-headers': 'X-Request-Id,Retry-After,WWW-Authenticate,Link,RateLimit,RateLimit-Policy,ETag,Location,X-Total-Count,Preference-Applied,Feed-Position,Idempotent-Replayed',
    });
  });

  it('when an unlisted origin sends a preflight, then no allow-origin header is given', async () => {
    const response = await app.request.options('/plants').set({ Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' });

    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('when a 401 goes to a listed origin, then the browser may read it', async () => {
    const response = await app.request.post('/plants').set({ Origin: 'https://app.example.com' });

    expect({ status: response.status, origin: response.headers['access-control-allow-origin'] }).toEqual({
      status: 401,
      origin: 'https://app.example.com',
    });
  });
});

describe('without CORS_ORIGINS', () => {
  const app = appForAll();

  it('when a browser sends a preflight, then it gets 204 with Allow and no CORS header, never a 401', async () => {
    const response = await app.request.options('/plants').set({ Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' });

    expect({ status: response.status, allow: response.headers.allow }).toEqual({ status: 204, allow: 'GET, HEAD, POST, OPTIONS' });
    expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('when a cross-origin POST arrives, then the response carries no CORS header', async () => {
    const response = await postPlant(app, aNewPlant(), { Origin: 'https://app.example.com' });

    expect(response.status).toBe(200);
    expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });
});

function pick(headers: Record<string, string>, names: string[]): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, headers[name]]));
}
