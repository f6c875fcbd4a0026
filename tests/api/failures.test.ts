import Database from 'better-sqlite3';
import { aNewPlant } from '../helpers/plants';
import { OTHER_TOKEN, bearer, defaultStore, postPlant, storedRows } from '../helpers/test-app';
import { appForAll, perTest } from '../helpers/fixtures';
import { perProcess } from '../helpers/test-workers';

const fixtures = perTest();

describe('paths and methods', () => {
  const app = appForAll();

  it('when the path does not exist, then it answers 404 with the not-found code', async () => {
    const response = await app.request.get('/plants/1/leaves').set(bearer());

    expect({ status: response.status, type: response.type, body: response.body }).toEqual({
      status: 404,
      type: 'application/json',
      body: { error: 40401, message: 'There is nothing at /plants/1/leaves; the API serves /plants and /plants/{id}.' },
    });
  });

  it.each(['put', 'delete', 'patch'] as const)('when %s is sent to /plants, then it answers 405 with Allow', async (method) => {
    const response = await app.request[method]('/plants').set(bearer());

    expect({ status: response.status, allow: response.headers.allow, body: response.body }).toEqual({
      status: 405,
      allow: 'GET, HEAD, POST, OPTIONS',
      body: { error: 40501, message: `${method.toUpperCase()} is not allowed here; this path allows GET, HEAD, POST, OPTIONS.` },
    });
  });

  it.each(['post'] as const)('when %s is sent to /plants/{id}, then it answers 405 with Allow', async (method) => {
    const response = await app.request[method]('/plants/42').set(bearer());

    expect({ status: response.status, allow: response.headers.allow, body: response.body }).toEqual({
      status: 405,
      allow: 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS',
      body: { error: 40501, message: `${method.toUpperCase()} is not allowed here; this path allows GET, HEAD, PUT, PATCH, DELETE, OPTIONS.` },
    });
  });

  it('when OPTIONS is sent to /plants/{id} without a token, then it answers 204 with that path\'s Allow', async () => {
    const response = await app.request.options('/plants/42');

    expect({ status: response.status, allow: response.headers.allow }).toEqual({ status: 204, allow: 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS' });
  });

  it('when an anonymous client probes an unknown path, then it learns nothing but 401', async () => {
    const response = await app.request.get('/admin');

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 401, error: 40101 });
  });
});

describe('rate limit', () => {
  const app = appForAll({ RATE_LIMIT_PER_MINUTE: '3' });

  it('when a token passes its limit, then it gets 429 with Retry-After while another token still gets through', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await postPlant(app, aNewPlant())).status);

    const limited = await postPlant(app, aNewPlant());
    const other = await postPlant(app, aNewPlant(), bearer(OTHER_TOKEN));

    expect(statuses).toEqual([200, 200, 200]);
    expect({ status: limited.status, body: limited.body }).toEqual({
      status: 429,
      body: { error: 42901, message: 'Too many requests; retry after the number of seconds in Retry-After.' },
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(other.status).toBe(200);
  });

  it('when requests carry no valid token, then they are counted per client address, apart from the tokens', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await app.request.post('/plants').set('Authorization', 'Bearer not-a-real-token-not-a-real-token')).status);
    }

    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it('when the limit is reached, then health checks and the OpenAPI document still answer', async () => {
    const responses = await Promise.all(['/healthz', '/readyz', '/openapi.json'].map((path) => app.request.get(path)));

    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
  });
});

// Faults of the SQLite file; PostgreSQL's are provoked in tests/postgres/outage.test.ts.
(defaultStore() === 'sqlite' ? describe : describe.skip)('store faults', () => {
  it('when another connection holds the write lock past the busy timeout, then it answers 503 with Retry-After and writes nothing', async () => {
    const app = await fixtures.app({ DATABASE_BUSY_TIMEOUT_MS: '50' });
    const locker = new Database(app.dbPath);
    locker.exec('BEGIN IMMEDIATE');
    const plant = aNewPlant();

    const response = await postPlant(app, plant);
    locker.exec('ROLLBACK');
    locker.close();

    expect({ status: response.status, retryAfter: response.headers['retry-after'], body: response.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: 50301, message: 'The store cannot take writes now; nothing was written. Retry later.' },
    });
    expect(storedRows(app)).toEqual([]);
    expect((await postPlant(app, plant)).status).toBe(200);
  });

  perProcess('the app opens its own connection read-only in the jest process').it('when the database is read-only, then it answers 503 and so does /readyz', async () => {
    const app = await fixtures.app({}, { readonly: true });

    const response = await postPlant(app, aNewPlant());
    const ready = await app.request.get('/readyz');

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 503, error: 50301 });
    expect({ status: ready.status, body: ready.body }).toEqual({
      status: 503,
      body: { error: 50301, message: 'The store is read-only; it cannot take writes.' },
    });
  });

  it('when the plants table is gone, then it answers 500 with no SQL or stack and logs the error with its stack', async () => {
    const app = await fixtures.app();
    const saboteur = new Database(app.dbPath);
    saboteur.exec('DROP TABLE plants');
    saboteur.close();

    const response = await postPlant(app, aNewPlant());

    expect({ status: response.status, body: response.body }).toEqual({
      status: 500,
      body: { error: 50001, message: 'Something went wrong on our side; the request was not applied.' },
    });
    const errorLine = app.logs.find((line) => line.level === 50);
    expect(errorLine).toMatchObject({ error: 50001, err: { message: expect.stringContaining('no such table'), stack: expect.any(String) } });
    expect(errorLine?.reqId).toBe(response.headers['x-request-id']);
  });

  it('when the migrations table is gone, then /readyz answers 503', async () => {
    const app = await fixtures.app();
    const saboteur = new Database(app.dbPath);
    saboteur.exec('DROP TABLE schema_migrations');
    saboteur.close();

    const response = await app.request.get('/readyz');

    expect({ status: response.status, body: response.body }).toEqual({
      status: 503,
      body: { error: 50301, message: 'The store cannot be read.' },
    });
  });
});
