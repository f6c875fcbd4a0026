import Database from 'better-sqlite3';
import { bucketsOf, family, scrape, valueOf, type Scrape } from '../helpers/metrics';
import { pause } from '../helpers/event-loop';
import { aNewPlant } from '../helpers/plants';
import { lockPlants } from '../helpers/store-lock';
import { bearer, defaultStore, dropTable, postPlant, type TestApp } from '../helpers/test-app';
import { appForAll, perTest } from '../helpers/fixtures';
import { perProcess } from '../helpers/test-workers';

const DURATION_BUCKETS = ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];

/** Scrapes until every response of the traffic has closed (the close event may follow the client's read by a tick). */
async function scrapeSettled(app: TestApp): Promise<Scrape> {
  for (let attempt = 0; ; attempt += 1) {
    const scraped = await scrape(app.metricsUrl ?? '');
    if (valueOf(scraped, 'http_requests_in_flight') === 0 || attempt === 50) return scraped;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GET /metrics on the metrics listener, after known traffic', () => {
  const app = appForAll({ METRICS_PORT: '9464' });
  let scraped: Scrape;
  let fetchedId: string;

  beforeAll(async () => {
    for (let i = 0; i < 3; i += 1) expect((await postPlant(app, aNewPlant())).status).toBe(200);
    const fetched = aNewPlant();
    expect((await postPlant(app, fetched)).status).toBe(200);
    fetchedId = String(fetched.id);
    expect((await app.request.get(`/plants/${fetchedId}`).set(bearer())).status).toBe(200);
    expect((await app.request.get(`/plants/${fetchedId}1`).set(bearer())).status).toBe(404);
    expect((await postPlant(app, aNewPlant({ name: '' }))).status).toBe(400);
    expect((await app.request.post('/plants')).status).toBe(401);
    expect((await app.request.post('/plants')).status).toBe(401);
    expect((await app.request.post('/plants').set('Authorization', 'Bearer not-a-token')).status).toBe(401);
    expect((await app.request.put('/plants').set(bearer())).status).toBe(405);
    expect((await app.request.get('/nowhere/12345').set(bearer())).status).toBe(404);
    expect((await app.request.get('/healthz')).status).toBe(200);
    scraped = await scrapeSettled(app);
  });

  it('when scraped, then the whole exposition parses as Prometheus text with its content type', () => {
    expect({ status: scraped.status, contentType: scraped.contentType }).toEqual({
      status: 200,
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
    });
    expect(scraped.families.length).toBeGreaterThan(20);
  });

  it('when requests were answered, then the duration histogram counts them by method, route template and status', () => {
    const count = (method: string, route: string, status: string) =>
      valueOf(scraped, 'http_request_duration_seconds_count', { method, route, status_code: status });

    expect({
      created: count('POST', '/plants', '200'),
      invalid: count('POST', '/plants', '400'),
      unauthenticated: count('POST', '/plants', '401'),
      wrongMethod: count('PUT', '/plants', '405'),
      fetched: count('GET', '/plants/:id', '200'),
      missing: count('GET', '/plants/:id', '404'),
      unknownPath: count('GET', '(unmatched)', '404'),
      health: count('GET', '/healthz', '200'),
    }).toEqual({ created: 4, invalid: 1, unauthenticated: 3, wrongMethod: 1, fetched: 1, missing: 1, unknownPath: 1, health: 1 });
    expect(family(scraped, 'http_request_duration_seconds').type).toBe('HISTOGRAM');
  });

  it('when a histogram is read, then its buckets are the documented bounds, cumulative, ending at the count', () => {
    const labels = { method: 'POST', route: '/plants', status_code: '200' };
    const buckets = bucketsOf(scraped, 'http_request_duration_seconds', labels);
    const counts = buckets.map(([, count]) => count);
    const sum = valueOf(scraped, 'http_request_duration_seconds_sum', labels) ?? 0;

    expect(buckets.map(([le]) => le)).toEqual(DURATION_BUCKETS);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(buckets.slice(-2)).toEqual([['10', 4], ['+Inf', 4]]);
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(30);
  });

  it('when a raw path was requested, then no label carries it: unknown paths share one fixed label', () => {
    const labels = scraped.families.flatMap((entry) => entry.metrics.flatMap((metric) => Object.values(metric.labels ?? {})));

    expect(labels.filter((value) => value.includes('nowhere') || value.includes('12345') || value.includes(fetchedId))).toEqual([]);
  });

  it('when errors were answered, then they are counted by code and cause, and auth failures on their own', () => {
    expect({
      invalidField: valueOf(scraped, 'plants_error_responses_total', { code: '40006', cause: 'invalid_field' }),
      missing: valueOf(scraped, 'plants_error_responses_total', { code: '40101', cause: 'missing_credentials' }),
      invalidToken: valueOf(scraped, 'plants_error_responses_total', { code: '40102', cause: 'invalid_token' }),
      notAllowed: valueOf(scraped, 'plants_error_responses_total', { code: '40501' }),
      notFound: valueOf(scraped, 'plants_error_responses_total', { code: '40401' }),
      plantNotFound: valueOf(scraped, 'plants_error_responses_total', { code: '40402', cause: 'plant_not_found' }),
      authMissing: valueOf(scraped, 'plants_auth_failures_total', { cause: 'missing_credentials' }),
      authInvalid: valueOf(scraped, 'plants_auth_failures_total', { cause: 'invalid_token' }),
      shed: valueOf(scraped, 'plants_requests_shed_total'),
      rateLimited: valueOf(scraped, 'plants_requests_rate_limited_total'),
      inFlight: valueOf(scraped, 'http_requests_in_flight'),
    }).toEqual({ invalidField: 1, missing: 2, invalidToken: 1, notAllowed: 1, notFound: 1, plantNotFound: 1, authMissing: 2, authInvalid: 1, shed: 0, rateLimited: 0, inFlight: 0 });
  });

  it('when creates were committed, then the group-commit histograms hold the four rows', () => {
    const commits = valueOf(scraped, 'plants_store_commit_batch_rows_count');

    // Each create was awaited before the next: four commits of one row each; reads commit nothing.
    expect({
      rows: valueOf(scraped, 'plants_store_commit_batch_rows_sum'),
      commits,
      timed: valueOf(scraped, 'plants_store_commit_duration_seconds_count'),
      oneRowBucket: bucketsOf(scraped, 'plants_store_commit_batch_rows').find(([le]) => le === '1')?.[1],
    }).toEqual({ rows: 4, commits: 4, timed: 4, oneRowBucket: 4 });
    expect(valueOf(scraped, 'plants_store_commit_duration_seconds_sum')).toBeGreaterThan(0);
  });

  it('when the runtime is watched, then Node and process defaults are exposed in base units', () => {
    const names = scraped.families.map((entry) => entry.name);

    expect(names).toEqual(
      expect.arrayContaining([
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_eventloop_lag_p99_seconds',
        'nodejs_heap_size_used_bytes',
        'nodejs_gc_duration_seconds',
      ]),
    );
  });

  it('when /metrics is asked on the public port, then it is not there', async () => {
    const anonymous = await app.request.get('/metrics');
    const withToken = await app.request.get('/metrics').set(bearer());

    expect([anonymous.status, withToken.status]).toEqual([401, 404]);
  });
});

// A second SQLite connection holding the write lock.
const sqliteOnly = defaultStore() === 'postgres' ? it.skip : it;
// On SQLite a statement that fails on its own fails alone, not the commit: PostgreSQL fails the whole batch.
const postgresOnly = defaultStore() === 'postgres' ? it : it.skip;

describe('metrics for refusals and store faults', () => {
  const open = perTest();

  it('when a client passes RATE_LIMIT_PER_MINUTE, then the refusal is counted as rate-limited', async () => {
    const app = await open.app({ METRICS_PORT: '9464', RATE_LIMIT_PER_MINUTE: '1' });

    const statuses = [(await postPlant(app, aNewPlant())).status, (await postPlant(app, aNewPlant())).status];
    const scraped = await scrapeSettled(app);

    expect(statuses).toEqual([200, 429]);
    expect(valueOf(scraped, 'plants_requests_rate_limited_total')).toBe(1);
    expect(valueOf(scraped, 'plants_error_responses_total', { code: '42901', cause: 'rate_limited' })).toBe(1);
  });

  perProcess('the queue of waiting creates is each worker\'s own (LOAD_SHED_LAG_MS applies to each), and pause() stalls the service\'s loop only at one worker').it('when 64 creates queue on a locked store, then the shed request is counted as shed', async () => {
    const app = await open.app({ METRICS_PORT: '9464', LOAD_SHED_LAG_MS: '300', DATABASE_BUSY_TIMEOUT_MS: '10000', DATABASE_STATEMENT_TIMEOUT_MS: '10000', DATABASE_CONNECT_TIMEOUT_MS: '9000' });
    const lock = await lockPlants(app);
    const queued = Promise.all(Array.from({ length: 64 }, () => postPlant(app, aNewPlant())));
    await pause(2000);

    const status = (await postPlant(app, aNewPlant())).status;
    await lock.release();
    await queued;
    const scraped = await scrapeSettled(app);

    expect(status).toBe(503);
    expect(valueOf(scraped, 'plants_requests_shed_total')).toBe(1);
  });

  sqliteOnly('when another connection holds the write lock, then the failed commit is counted by its driver code', async () => {
    const app = await open.app({ METRICS_PORT: '9464', DATABASE_BUSY_TIMEOUT_MS: '50' });
    const locker = new Database(app.dbPath);
    locker.exec('BEGIN IMMEDIATE');

    const status = (await postPlant(app, aNewPlant())).status;
    locker.exec('ROLLBACK');
    locker.close();
    const scraped = await scrapeSettled(app);

    expect(status).toBe(503);
    expect(valueOf(scraped, 'plants_store_errors_total', { kind: 'SQLITE_BUSY' })).toBe(1);
    expect(valueOf(scraped, 'plants_error_responses_total', { code: '50301', cause: 'store_unavailable' })).toBe(1);
  });

  postgresOnly('when the plants table is gone, then the failed commit is counted by its SQLSTATE class', async () => {
    const app = await open.app({ METRICS_PORT: '9464' });
    dropTable(app, 'plants');

    const status = (await postPlant(app, aNewPlant())).status;
    const scraped = await scrapeSettled(app);

    expect(status).toBe(500);
    expect(valueOf(scraped, 'plants_store_errors_total', { kind: 'SQLSTATE_42' })).toBe(1);
    expect(valueOf(scraped, 'plants_store_commit_batch_rows_count')).toBe(0);
  });
});
