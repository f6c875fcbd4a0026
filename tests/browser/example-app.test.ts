import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { seedPlants, signIn, startExampleApp, withChromiumAndNginx, type ExampleApp } from '../helpers/example-app';
import { storedPlant } from '../helpers/test-app';

const ROOT = path.resolve(__dirname, '..', '..');
const OUTPUT = path.join(ROOT, 'test-results', 'example-app');
const BIG = 9007199254740993n;
const APP_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'";

withChromiumAndNginx('the example app (examples/web) in Chromium, served by nginx with the service at /api/', (executablePath) => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp(executablePath);
    // Around the created plant: in id order, the first page of 10 ends at BIG + 5 and the second holds BIG + 6.
    await seedPlants(example, [-5n, -4n, -3n, -2n, -1n, 1n, 2n, 3n, 4n, 5n, 6n].map((offset) => ({ id: BIG + offset, name: `Neighbour ${BIG + offset}` })));
  }, 120_000);

  afterAll(() => example?.close());

  it('when the page, a route, a file and a missing file are fetched through nginx, then each carries the policy and nosniff, and the service under /api/ keeps its own headers', async () => {
    const { app, proxy } = example;
    const page = await fetch(`${proxy.origin}/`);
    const html = await page.text();
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1] ?? 'no module script';
    const paths = ['/', '/index.html', '/plants/42', script, '/assets/missing.js'];
    const answers = await Promise.all(paths.map((target) => fetch(`${proxy.origin}${target}`)));
    const viaProxy = await fetch(`${proxy.origin}/api/healthz`);
    const direct = await fetch(`${app.url}/healthz`);

    expect(answers.map((answer) => ({ status: answer.status, policy: answer.headers.get('content-security-policy'), nosniff: answer.headers.get('x-content-type-options') }))).toEqual(
      [200, 200, 200, 200, 404].map((status) => ({ status, policy: APP_POLICY, nosniff: 'nosniff' })),
    );
    expect(answers.map((answer) => answer.headers.get('cache-control'))).toEqual([null, null, null, 'public, max-age=31536000, immutable', null]);
    expect({ policy: viaProxy.headers.get('content-security-policy'), nosniff: viaProxy.headers.get('x-content-type-options') }).toEqual({
      policy: direct.headers.get('content-security-policy'),
      nosniff: 'nosniff',
    });
  });

  it('when a user signs in, creates 9007199254740993, pages, meets a field error and deletes, then every step shows the exact id', async () => {
    // The one 400 here is the field error the test provokes.
    const page = await signIn(example, [400]);
    const { app, proxy, requests, problems } = example;
    const ids = () => page.locator('#plants td.id').allTextContents();

    await page.locator('#sort').selectOption('id');
    await page.locator('#plants tr').first().waitFor();
    await page.locator('#plant-id').fill(BIG.toString());
    await page.locator('#plant-name').fill('Exact fern');
    await page.locator('#plant-tag').fill('shade');
    await page.locator('#create button[type=submit]').click();
    await page.locator('#create-message', { hasText: 'Created' }).waitFor();
    await page.locator('#plants td.id', { hasText: BIG.toString() }).waitFor();
    const created = await page.locator('#create-message').textContent();
    const firstPage = await ids();
    await page.locator('#load-more').click();
    await page.locator('#plants td.id', { hasText: (BIG + 6n).toString() }).waitFor();
    const bothPages = await ids();
    const loadMoreHidden = await page.locator('#load-more').isHidden();

    await page.locator('#plant-name').fill('n'.repeat(201));
    await page.locator('#create button[type=submit]').click();
    await page.locator('#create [data-error-for=name]', { hasText: 'must be' }).waitFor();
    const fieldError = await page.locator('#create [data-error-for=name]').textContent();
    const serviceMessage = await page.locator('#create-message').textContent();
    const nameInvalid = await page.locator('#plant-name').getAttribute('aria-invalid');

    await page.locator(`#plants tr[data-id="${BIG}"] button.delete`).click();
    await page.locator(`#plants tr[data-id="${BIG}"]`).waitFor({ state: 'detached' });
    const stored = await page.evaluate<string>('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })');
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'example-app.png'), fullPage: true });
    await page.close();

    expect(created).toBe('Created Exact fern with id 9007199254740993.');
    // The created plant joins the loaded page in its place; the next page still starts after BIG + 5.
    expect(firstPage).toEqual([-5n, -4n, -3n, -2n, -1n, 0n, 1n, 2n, 3n, 4n, 5n].map((offset) => (BIG + offset).toString()));
    expect(bothPages).toEqual([...firstPage, (BIG + 6n).toString()]);
    expect(loadMoreHidden).toBe(true);
    expect({ fieldError, serviceMessage, nameInvalid }).toEqual({
      fieldError: 'must be at most 200 characters (Unicode code points)',
      serviceMessage: 'name: must be at most 200 characters (Unicode code points) (error 40006)',
      nameInvalid: 'true',
    });
    expect(storedPlant(app, BIG)).toBeUndefined();
    expect(storedPlant(app, BIG + 1n)).toEqual({ id: BIG + 1n, name: `Neighbour ${BIG + 1n}`, tag: null });
    expect(stored).not.toContain(example.token);
    expect(requests.filter((url) => !url.startsWith(`${proxy.origin}/`))).toEqual([]);
    // The second page continues after the first page's last id, exactly (past 2^53).
    expect(requests.filter((url) => url.startsWith(`${proxy.origin}/api/plants?`)).map((url) => new URL(url).searchParams.get('after'))).toContain((BIG + 5n).toString());
    expect(problems).toEqual([]);
  }, 90_000);
});
