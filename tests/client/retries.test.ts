import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, newPlantId, PlantStoreError } from '../../clients/typescript/src/index';
import { startTestApp, TOKEN, type TestApp } from '../helpers/test-app';

/** A front door that answers its first `refusals` requests with this status and Retry-After, then forwards; it keeps each request's Idempotency-Key. */
async function flakyFront(upstream: string, refusals: number, status: number, retryAfter: string, code = status === 429 ? 42901 : 50303) {
  const seen: number[] = [];
  const keys: (string | string[] | undefined)[] = [];
  const server = http.createServer((req, res) => {
    seen.push(Date.now());
    keys.push(req.headers['idempotency-key']);
    if (seen.length <= refusals) {
      res.writeHead(status, { 'Content-Type': 'application/json', 'Retry-After': retryAfter, 'X-Request-Id': `refused-${seen.length}` });
      res.end(JSON.stringify({ error: code, message: 'busy' }));
      return;
    }
    const target = new URL(req.url ?? '/', upstream);
    const forward = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    keys,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('the TypeScript client retrying', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app.close();
  });

  it('when the service answers 503 with Retry-After: 1, then the create waits that second and succeeds on the next try', async () => {
    const front = await flakyFront(app.url, 1, 503, '1');
    const client = createClient({ baseUrl: front.url, token: TOKEN, retry: { attempts: 3, maxDelayMs: 2000 } });

    const id = newPlantId();
    const created = await client.createPlant({ id, name: 'Patient' });
    await front.close();

    expect(created).toEqual({ id, name: 'Patient' });
    expect(front.seen).toHaveLength(2);
    expect((front.seen[1] ?? 0) - (front.seen[0] ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it('when a write is answered 409 40902 (its key still in progress), then it waits Retry-After and sends it again with the same key', async () => {
    const front = await flakyFront(app.url, 1, 409, '1', 40902);
    const client = createClient({ baseUrl: front.url, token: TOKEN, retry: { attempts: 3, maxDelayMs: 2000 } });

    const id = newPlantId();
    const created = await client.createPlant({ id, name: 'In progress' });
    await client.deletePlant(id);
    await front.close();

    expect(created).toEqual({ id, name: 'In progress' });
    // The create twice with its key, then the delete with a key of its own.
    expect(front.keys).toEqual([front.keys[0], front.keys[0], front.keys[2]]);
    expect(front.keys[0]).toMatch(/^\d+-\d+-\d+-\d+$/);
    expect(front.keys[2]).not.toBe(front.keys[0]);
    expect((front.seen[1] ?? 0) - (front.seen[0] ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it('when a write is answered 409 with another code, then it is not retried', async () => {
    const front = await flakyFront(app.url, 10, 409, '0', 40999);
    const client = createClient({ baseUrl: front.url, token: TOKEN, retry: { attempts: 3, maxDelayMs: 100 } });

    const error = (await client.createPlant({ id: newPlantId(), name: 'Conflict' }).catch((caught: unknown) => caught)) as PlantStoreError;
    await front.close();

    expect({ status: error.status, code: error.code, tries: front.seen.length }).toEqual({ status: 409, code: 40999, tries: 1 });
  });

  it('when every try is refused with 429, then it stops after attempts tries with the last error', async () => {
    const front = await flakyFront(app.url, 10, 429, '0');
    const client = createClient({ baseUrl: front.url, token: TOKEN, retry: { attempts: 3, maxDelayMs: 100 } });

    const error = (await client.listPlants().catch((caught: unknown) => caught)) as PlantStoreError;
    await front.close();

    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ status: error.status, code: error.code, requestId: error.requestId, retryAfterMs: error.retryAfterMs, tries: front.seen.length }).toEqual({
      status: 429,
      code: 42901,
      requestId: 'refused-3',
      retryAfterMs: 0,
      tries: 3,
    });
  });

  it('when Retry-After is beyond maxDelayMs, then it does not retry early and hands the wait to the caller', async () => {
    const front = await flakyFront(app.url, 10, 503, '30');
    const client = createClient({ baseUrl: front.url, token: TOKEN, retry: { attempts: 5, maxDelayMs: 1000 } });

    const error = (await client.getPlant(1n).catch((caught: unknown) => caught)) as PlantStoreError;
    await front.close();

    expect({ status: error.status, retryAfterMs: error.retryAfterMs, tries: front.seen.length }).toEqual({ status: 503, retryAfterMs: 30_000, tries: 1 });
  });

  it('when the connection is refused, then it tries attempts times and rejects with the network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    let tries = 0;
    const client = createClient({
      baseUrl: url,
      token: TOKEN,
      retry: { attempts: 4, maxDelayMs: 50 },
      fetch: (input, init) => {
        tries += 1;
        return fetch(input, init);
      },
    });

    const error = await client.listPlants().catch((caught: unknown) => caught);

    expect({ error: (error as Error).name, tries }).toEqual({ error: 'TypeError', tries: 4 });
  });

  it('when the signal aborts during the wait for Retry-After, then the call rejects at once with the abort reason', async () => {
    const front = await flakyFront(app.url, 10, 503, '5');
    const client = createClient({ baseUrl: front.url, token: TOKEN, retry: { attempts: 3, maxDelayMs: 10_000 } });
    const controller = new AbortController();
    const started = Date.now();

    setTimeout(() => controller.abort(new Error('the user left the page')), 200);
    const error = (await client.createPlant({ id: newPlantId(), name: 'Abandoned' }, { signal: controller.signal }).catch((caught: unknown) => caught)) as Error;
    await front.close();

    expect({ message: error.message, tries: front.seen.length }).toEqual({ message: 'the user left the page', tries: 1 });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
