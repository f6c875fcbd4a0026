import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { launchChromium, reportPolicyViolations } from '../helpers/browser';
import { nginxAvailable, startNginx } from '../helpers/nginx';
import { describeWith } from '../helpers/optional-services';
import { startTestApp, storedPlant, type TestApp } from '../helpers/test-app';

const ROOT = path.resolve(__dirname, '..', '..');
const OUTPUT = path.join(ROOT, 'test-results', 'example-app');
const BIG = 9007199254740993n;
const APP_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'";

// Needs nginx as well: skipped with the nginx line when it is missing (and failing under CI).
const withNginx = nginxAvailable() ? describeWith : (_service: 'chromium', name: string, body: (value: string) => void) => describe.skip(name, () => body(''));

withNginx('chromium', 'the example app (examples/web) in Chromium, served by nginx with the service at /api/', (executablePath) => {
  const token = randomBytes(32).toString('hex');
  let app: TestApp;
  let proxy: { origin: string; stop: () => Promise<void> };
  let browser: Browser;

  beforeAll(async () => {
    // The app as users get it: vite's production build (the client's dist/ is built by globalSetup).
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], { cwd: path.join(ROOT, 'examples', 'web') });
    app = await startTestApp({ AUTH_TOKENS: token, TRUST_PROXY: '1' });
    proxy = await startNginx(Number(new URL(app.url).port));
    browser = await launchChromium(executablePath);
    // Around the created plant: in id order, the first page of 10 ends at BIG + 4 and the second holds two.
    for (const id of [-5n, -4n, -3n, -2n, -1n, 1n, 2n, 3n, 4n, 5n, 6n].map((offset) => BIG + offset)) {
      await app.request.post('/plants').set({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }).send(`{"id":${id},"name":"Neighbour ${id}"}`);
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
    await app?.close();
  });

  it('when the page, a route, a file and a missing file are fetched through nginx, then each carries the policy and nosniff, and the service under /api/ keeps its own headers', async () => {
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
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    await reportPolicyViolations(context);
    const page = await context.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    // Chromium logs every 4xx fetch to the console; the one 400 here is the field error the test provokes.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().includes('status of 400')) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => requests.push(request.url()));
    const ids = () => page.locator('#plants td.id').allTextContents();

    await page.goto(`${proxy.origin}/`);
    await page.locator('#token').fill(token);
    await page.locator('#login button[type=submit]').click();
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
    await context.close();

    expect(created).toBe('Created Exact fern with id 9007199254740993.');
    expect(firstPage).toEqual([-5n, -4n, -3n, -2n, -1n, 0n, 1n, 2n, 3n, 4n].map((offset) => (BIG + offset).toString()));
    expect(bothPages).toEqual([...firstPage, (BIG + 5n).toString(), (BIG + 6n).toString()]);
    expect(loadMoreHidden).toBe(true);
    expect({ fieldError, serviceMessage, nameInvalid }).toEqual({
      fieldError: 'must be at most 200 characters (Unicode code points)',
      serviceMessage: 'name: must be at most 200 characters (Unicode code points) (error 40006)',
      nameInvalid: 'true',
    });
    expect(storedPlant(app, BIG)).toBeUndefined();
    expect(storedPlant(app, BIG + 1n)).toEqual({ id: BIG + 1n, name: `Neighbour ${BIG + 1n}`, tag: null });
    expect(stored).not.toContain(token);
    expect(requests.filter((url) => !url.startsWith(`${proxy.origin}/`))).toEqual([]);
    // The second page continues after the first page's last id, exactly (past 2^53).
    expect(requests.filter((url) => url.startsWith(`${proxy.origin}/api/plants?`)).map((url) => new URL(url).searchParams.get('after'))).toContain((BIG + 4n).toString());
    expect(problems).toEqual([]);
  }, 90_000);
});
