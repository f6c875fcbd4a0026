import { withTimes } from '../helpers/plants';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { serveClientPage } from '../helpers/client-site';
import { describeWith } from '../helpers/optional-services';
import { OTHER_TOKEN, startTestApp, storedPlant, TOKEN, type TestApp } from '../helpers/test-app';

const BIG = 9007199254740993n;
const LIMIT_PER_MINUTE = 40;

/**
 * The page's own module: the built client as a browser gets it (dist/ bundled by esbuild, no shim), and a fetch
 * that records what the page's code can read of each answer; a header the service does not expose reads null.
 */
const PAGE = `<!doctype html><title>a front end on another origin</title>
<script type="module">
  import * as plantStore from '/client.js';
  const seen = [];
  const recordingFetch = async (input, init) => {
    const response = await fetch(input, init);
    const read = (name) => response.headers.get(name);
    seen.push({ method: init?.method ?? 'GET', url: String(input), status: response.status, link: read('Link'), requestId: read('X-Request-Id'),
      rateLimit: read('RateLimit'), rateLimitPolicy: read('RateLimit-Policy'), retryAfter: read('Retry-After') });
    return response;
  };
  Object.assign(window, { plantStore, seen, recordingFetch, ready: true });
</script>`;

describeWith('chromium', 'the client alone in Chromium, on a page of another origin (CORS_ORIGINS)', (executablePath) => {
  let app: TestApp;
  let site: Awaited<ReturnType<typeof serveClientPage>> | undefined;
  let origin: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    site = await serveClientPage(PAGE);
    origin = site.origin;
    app = await startTestApp({ CORS_ORIGINS: origin, RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE) });
    browser = await launchChromium(executablePath);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await site?.close();
  });

  beforeEach(async () => {
    page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction('window.ready === true');
  });

  afterEach(async () => {
    await page.close();
  });

  /** Runs page-side code (text: this project's TypeScript has no DOM types) with `client` made on the service's URL. */
  const inPage = <T>(token: string, body: string, retry = '{}'): Promise<T> =>
    page.evaluate<T>(`(async () => {
      const { createClient, newPlantId, PlantStoreError } = window.plantStore;
      const client = createClient({ baseUrl: ${JSON.stringify(app.url)}, token: ${JSON.stringify(token)}, fetch: window.recordingFetch, retry: ${retry} });
      ${body}
    })()`);

  it('when plants past 2^53 are created and read back, then every id keeps its digits in the page and the store', async () => {
    const result = await inPage<{ created: unknown; read: unknown[]; drawn: string; drawnRead: string; types: string[] }>(
      TOKEN,
      `const ids = [${BIG}n, ${BIG + 2n}n, 2n ** 63n - 1n];
      const drawn = newPlantId();
      const created = await client.createPlant({ id: ids[0], name: 'Exact fern', tag: 'cross-origin' });
      for (const id of [...ids.slice(1), drawn]) await client.createPlant({ id, name: 'Exact ' + id });
      const plants = await Promise.all(ids.map((id) => client.getPlant(id)));
      const drawnPlant = await client.getPlant(drawn);
      return {
        created: { ...created, id: String(created.id) },
        read: plants.map((plant) => ({ ...plant, id: String(plant.id) })),
        drawn: String(drawn),
        drawnRead: String(drawnPlant.id),
        types: [...plants, drawnPlant].map((plant) => typeof plant.id),
      };`,
    );

    expect(result).toEqual({
      created: { id: String(BIG), name: 'Exact fern', tag: 'cross-origin' },
      read: [
        withTimes({ id: '9007199254740993', name: 'Exact fern', tag: 'cross-origin' }),
        withTimes({ id: '9007199254740995', name: 'Exact 9007199254740995' }),
        withTimes({ id: '9223372036854775807', name: 'Exact 9223372036854775807' }),
      ],
      drawn: result.drawn,
      drawnRead: result.drawn,
      types: ['bigint', 'bigint', 'bigint', 'bigint'],
    });
    expect(storedPlant(app, BIG)).toEqual({ id: BIG, name: 'Exact fern', tag: 'cross-origin' });
    expect(storedPlant(app, BIG + 1n)).toBeUndefined();
    expect(storedPlant(app, BigInt(result.drawn))).toEqual({ id: BigInt(result.drawn), name: `Exact ${result.drawn}`, tag: null });
  });

  it('when a tag is paged, then nextAfter and the followed Link stay on the service\'s origin with exact ids', async () => {
    const tag = `pages-${Date.now()}`;
    const ids = [BIG + 100n, BIG + 101n, BIG + 102n, BIG + 103n, BIG + 104n];
    for (const id of ids) await app.request.post('/plants').set({ Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }).send(`{"id":${id},"name":"Paged","tag":"${tag}"}`);

    const result = await inPage<{ first: string[]; nextAfter: string; walked: string[]; requests: unknown[] }>(
      TOKEN,
      `const first = await client.listPlants({ limit: 2, tag: ${JSON.stringify(tag)} });
      seen.length = 0;
      const walked = [];
      for await (const plant of client.plants({ tag: ${JSON.stringify(tag)}, pageSize: 2 })) walked.push(String(plant.id));
      return { first: first.plants.map((plant) => String(plant.id)), nextAfter: String(first.nextAfter), walked,
        requests: seen.map(({ url, link }) => ({ url, link })) };`,
    );

    const list = `${app.url}/plants?limit=2`;
    expect(result).toEqual({
      first: ['9007199254741093', '9007199254741094'],
      nextAfter: '9007199254741094',
      walked: ids.map(String),
      requests: [
        { url: `${list}&tag=${tag}`, link: `</plants?limit=2&after=9007199254741094&tag=${tag}>; rel="next"` },
        { url: `${list}&after=9007199254741094&tag=${tag}`, link: `</plants?limit=2&after=9007199254741096&tag=${tag}>; rel="next"` },
        { url: `${list}&after=9007199254741096&tag=${tag}`, link: null },
      ],
    });
  });

  it('when a search is listed by name with a count, then the page sends Prefer through the preflight and reads the total, the position and the cursor link', async () => {
    const tag = `search-${Date.now()}`;
    for (const [index, name] of ['Royal fern', 'bird Fern', 'Cactus'].entries()) {
      await app.request.post('/plants').set({ Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }).send(`{"id":${BIG + 400n + BigInt(index)},"name":"${name}","tag":"${tag}"}`);
    }

    const result = await inPage<{ names: string[][]; total: number; position: string; cursor: boolean }>(
      TOKEN,
      `const first = await client.listPlants({ q: 'FERN', tag: ${JSON.stringify(tag)}, sort: 'name', limit: 1, count: true });
      const second = await client.listPlants({ next: first.next });
      return { names: [first.plants, second.plants].map((plants) => plants.map((plant) => plant.name)), total: first.total,
        position: typeof first.position, cursor: first.next.includes('cursor=') };`,
    );

    expect(result).toEqual({ names: [['bird Fern'], ['Royal fern']], total: 2, position: 'bigint', cursor: true });
  });

  it('when fields break their rules, then the page reads each field\'s code, the catalogue code and the request id', async () => {
    const result = await inPage<Record<string, unknown>>(
      TOKEN,
      `try {
        await client.createPlant({ id: newPlantId(), name: 'n'.repeat(201), tag: ' ' });
        return { thrown: false };
      } catch (error) {
        return { isPlantStoreError: error instanceof PlantStoreError, status: error.status, code: error.code, message: error.message,
          fields: error.fields, requestId: error.requestId, sentId: seen.at(-1).requestId, tries: seen.length };
      }`,
    );

    expect(result).toEqual({
      isPlantStoreError: true,
      status: 400,
      code: 40006,
      message: 'name: must be at most 200 characters (Unicode code points); tag: must have at least one non-whitespace character',
      fields: [
        { field: 'name', code: 'too_long', message: 'must be at most 200 characters (Unicode code points)' },
        { field: 'tag', code: 'blank', message: 'must have at least one non-whitespace character' },
      ],
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sentId: result.requestId,
      tries: 1,
    });
  });

  it('when a token spends its limit, then the page reads RateLimit on every answer and the 429 carries retryAfterMs', async () => {
    const result = await inPage<{ headers: unknown[]; error: Record<string, unknown>; tries: number }>(
      OTHER_TOKEN,
      `let error;
      for (let i = 0; i <= ${LIMIT_PER_MINUTE} && error === undefined; i += 1) {
        await client.listPlants({ limit: 1 }).catch((caught) => { error = caught; });
      }
      return { headers: seen.map(({ status, rateLimit, rateLimitPolicy, retryAfter }) => ({ status, rateLimit, rateLimitPolicy, retryAfter })),
        error: { status: error.status, code: error.code, retryAfterMs: error.retryAfterMs }, tries: seen.length };`,
      '{ attempts: 3, maxDelayMs: 1000 }',
    );

    expect(result.tries).toBe(LIMIT_PER_MINUTE + 1);
    expect(result.headers[0]).toEqual({
      status: 200,
      rateLimit: expect.stringMatching(new RegExp(`^"${LIMIT_PER_MINUTE}-in-1min"; r=${LIMIT_PER_MINUTE - 1}; t=\\d+$`)),
      rateLimitPolicy: expect.stringMatching(new RegExp(`^"${LIMIT_PER_MINUTE}-in-1min"; q=${LIMIT_PER_MINUTE}; w=60`)),
      retryAfter: null,
    });
    expect(result.headers.at(-1)).toEqual({
      status: 429,
      rateLimit: expect.stringMatching(new RegExp(`^"${LIMIT_PER_MINUTE}-in-1min"; r=0; t=\\d+$`)),
      rateLimitPolicy: expect.stringMatching(new RegExp(`^"${LIMIT_PER_MINUTE}-in-1min"; q=${LIMIT_PER_MINUTE}; w=60`)),
      retryAfter: expect.stringMatching(/^\d+$/),
    });
    // Retry-After (seconds to the window's end) is past maxDelayMs, so the client throws at once with it.
    expect(result.error).toEqual({ status: 429, code: 42901, retryAfterMs: Number((result.headers.at(-1) as { retryAfter: string }).retryAfter) * 1000 });
  });

  it('when a plant is edited with its ETag and the feed is read from its version, then the page reads ETag, sends If-Match and Last-Event-ID, and gets the edit', async () => {
    const id = BIG + 200n;

    const result = await inPage<Record<string, unknown>>(
      TOKEN,
      `const id = ${id}n;
      await client.createPlant({ id, name: 'Cross-origin edit' });
      const read = await client.getPlant(id);
      const saved = await client.updatePlant(id, { tag: 'edited' }, { ifMatch: read.etag });
      const stale = await client.updatePlant(id, { name: 'Stale' }, { ifMatch: read.etag }).then(() => 'saved', (error) => ({ status: error.status, code: error.code }));
      const stop = new AbortController();
      const events = [];
      for await (const change of client.changes({ after: BigInt(read.etag.slice(1, -1)), signal: stop.signal })) {
        events.push(change.type === 'open' ? 'open' : change.type + ' ' + String(change.plant.id) + ' ' + change.plant.tag + ' ' + change.plant.etag);
        if (events.length === 2) stop.abort();
      }
      return { readEtag: read.etag, saved: { ...saved, id: String(saved.id) }, savedEtag: saved.etag, stale, events };`,
    );

    expect(result).toEqual({
      readEtag: expect.stringMatching(/^"\d+"$/),
      saved: withTimes({ id: String(id), name: 'Cross-origin edit', tag: 'edited' }),
      savedEtag: expect.stringMatching(/^"\d+"$/),
      stale: { status: 412, code: 41201 },
      events: ['open', `plant.updated ${id} edited ${result.savedEtag as string}`],
    });
    expect(result.savedEtag).not.toBe(result.readEtag);
    expect(storedPlant(app, id)).toEqual({ id, name: 'Cross-origin edit', tag: 'edited' });
  });

  it('when the call is aborted, then it rejects with the signal\'s reason', async () => {
    const result = await inPage<string>(
      TOKEN,
      `const controller = new AbortController();
      controller.abort(new Error('user left the page'));
      return client.getPlant(${BIG}n, { signal: controller.signal }).then(() => 'resolved', (error) => error.message);`,
    );

    expect(result).toBe('user left the page');
  });
});
