import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { serveClientPage } from '../helpers/client-site';
import { describeWith } from '../helpers/optional-services';
import { startTestApp, storedPlant, TOKEN, type TestApp } from '../helpers/test-app';

const BIG = 9007199254740993n;

/** The page's own module: the built client as a browser gets it (dist/ bundled by esbuild, no shim). */
const PAGE = `<!doctype html><title>a front end on another origin</title>
<script type="module">
  import * as plantStore from '/client.js';
  Object.assign(window, { plantStore, ready: true });
</script>`;

describeWith('chromium', 'putPlant, batch and keyed writes from Chromium, on a page of another origin (CORS_ORIGINS)', (executablePath) => {
  let app: TestApp;
  let site: Awaited<ReturnType<typeof serveClientPage>> | undefined;
  let origin: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    site = await serveClientPage(PAGE);
    origin = site.origin;
    app = await startTestApp({ CORS_ORIGINS: origin });
    browser = await launchChromium(executablePath);
    page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction('window.ready === true');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await site?.close();
  });

  /** Runs page-side code (text: this project's TypeScript has no DOM types) with `client` made on the service's URL. */
  const inPage = <T>(body: string): Promise<T> =>
    page.evaluate<T>(`(async () => {
      const client = window.plantStore.createClient({ baseUrl: ${JSON.stringify(app.url)}, token: ${JSON.stringify(TOKEN)} });
      const failed = (error) => ({ status: error.status, code: error.code, operation: error.operation });
      ${body}
    })()`);

  it('when a page puts with If-None-Match and If-Match, then both pass the preflight: a create, a 412, and a replace with the ETag it read', async () => {
    const id = BIG + 300n;

    const result = await inPage<Record<string, unknown>>(
      `const id = ${id}n;
      const made = await client.putPlant(id, { name: 'Cross-origin put', tag: 'new' }, { ifNoneMatch: '*' });
      const again = await client.putPlant(id, { name: 'Again' }, { ifNoneMatch: '*' }).then(() => 'saved', failed);
      const replaced = await client.putPlant(id, { name: 'Replaced' }, { ifMatch: made.plant.etag });
      return { made: { id: String(made.plant.id), created: made.created }, again, replaced: { name: replaced.plant.name, created: replaced.created } };`,
    );

    expect(result).toEqual({ made: { id: String(id), created: true }, again: { status: 412, code: 41201 }, replaced: { name: 'Replaced', created: false } });
    expect(storedPlant(app, id)).toEqual({ id, name: 'Replaced', tag: null });
  });

  it('when a page sends a batch with ids past 2^53, then its results keep every digit, and a failed one names its operation and stores nothing', async () => {
    const [a, b] = [BIG + 400n, BIG + 402n];

    const result = await inPage<Record<string, unknown>>(
      `const results = await client.batch([{ op: 'create', plant: { id: ${a}n, name: 'A' } }, { op: 'put', id: ${b}n, plant: { name: 'B' } }, { op: 'update', id: ${a}n, patch: { tag: 't' } }]);
      const error = await client.batch([{ op: 'delete', id: ${a}n }, { op: 'delete', id: ${a}n }]).then(() => 'saved', failed);
      return { ids: results.map((result) => String(result.plant.id)), statuses: results.map((result) => result.status), error };`,
    );

    expect(result).toEqual({ ids: [String(a), String(b), String(a)], statuses: [200, 201, 200], error: { status: 404, code: 40402, operation: 1 } });
    expect([storedPlant(app, a), storedPlant(app, b)]).toEqual([{ id: a, name: 'A', tag: 't' }, { id: b, name: 'B', tag: null }]);
  });
  it('when a page writes with Idempotency-Key, then the preflight lets the key through and the page reads Idempotent-Replayed: a delete sent twice with one key is 204 twice', async () => {
    const id = BIG + 500n;

    const seen = await inPage<Record<string, unknown>[]>(
      `const seen = [];
      const keyed = window.plantStore.createClient({
        baseUrl: ${JSON.stringify(app.url)},
        token: ${JSON.stringify(TOKEN)},
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          seen.push({ method: init.method, key: init.headers['Idempotency-Key'], status: response.status, replayed: response.headers.get('Idempotent-Replayed') });
          return response;
        },
      });
      await keyed.createPlant({ id: ${id}n, name: 'Keyed from a page' });
      const key = window.plantStore.newIdempotencyKey();
      await keyed.deletePlant(${id}n, { idempotencyKey: key });
      await keyed.deletePlant(${id}n, { idempotencyKey: key });
      return seen;`,
    );

    const key = seen[1]?.key;
    expect(seen).toEqual([
      { method: 'POST', key: expect.stringMatching(/^\d+-\d+-\d+-\d+$/), status: 200, replayed: null },
      { method: 'DELETE', key: expect.stringMatching(/^\d+-\d+-\d+-\d+$/), status: 204, replayed: null },
      { method: 'DELETE', key, status: 204, replayed: 'true' },
    ]);
    expect(key).not.toBe(seen[0]?.key);
    expect(storedPlant(app, id)).toBeUndefined();
  });
});
