import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { describeWith } from '../helpers/optional-services';
import { uniqueId } from '../helpers/plants';
import { startPrefixProxy } from '../helpers/http-proxy';
import { startTestApp, storedRows, type TestApp } from '../helpers/test-app';

const OUTPUT = path.resolve(__dirname, '..', '..', 'test-results', 'docs-page');
const PREFIX = '/some/prefix';

describeWith('chromium', 'GET /docs in Chromium, behind a proxy that mounts the service under a path prefix', (executablePath) => {
  const token = randomBytes(32).toString('hex');
  let app: TestApp;
  let proxy: { url: string; close: () => Promise<void> };
  let browser: Browser;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_TOKENS: token });
    proxy = await startPrefixProxy(app.url, PREFIX);
    browser = await launchChromium(executablePath);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await app?.close();
  });

  it('when a reader opens it, authorizes with a token and tries POST /plants, then the plant is stored and the page stays clean', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
    page.on('request', (request) => requests.push(`${request.method()} ${request.url()}`));
    // Page-side code as text: this project's TypeScript has no DOM types.
    await page.addInitScript(
      "window.violations = []; document.addEventListener('securitypolicyviolation', (event) => window.violations.push(event.violatedDirective + ' ' + event.blockedURI));",
    );
    await page.goto(`${proxy.url}${PREFIX}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    const operations = await page.evaluate<string[]>(
      "[...document.querySelectorAll('.opblock-summary')].map((node) => (node.querySelector('.opblock-summary-method')?.textContent ?? '') + ' ' + (node.querySelector('.opblock-summary-path')?.textContent ?? '').replace(/\\u200b/g, ''))",
    );

    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.modal-ux input').first().fill(token);
    await page.locator('.modal-ux button.modal-btn.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();
    const id = uniqueId();
    const operation = page.locator('#operations-plants-addPlant');
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('textarea.body-param__text').fill(JSON.stringify({ id, name: 'Tried from the docs page', tag: 'docs' }));
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor({ timeout: 20_000 });
    const answered = (await status.textContent())?.trim();
    const pageText = await page.evaluate<string>('document.body.innerText');
    const stored = await page.evaluate<string>('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })');
    const violations = await page.evaluate<string[]>('window.violations');
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'docs-page.png'), fullPage: true });
    await context.close();

    expect(operations).toEqual(expect.arrayContaining(['POST /plants', 'GET /healthz', 'GET /readyz', 'GET /openapi.json']));
    expect(answered).toBe('200');
    expect(pageText).toContain('40101: Send Authorization: Bearer <token>.');
    expect(storedRows(app).filter((row) => row.id === BigInt(id))).toEqual([{ id: BigInt(id), name: 'Tried from the docs page', tag: 'docs' }]);
    expect(requests).toContain(`POST ${proxy.url}${PREFIX}/plants`);
    expect(requests.filter((url) => !url.includes(`${proxy.url}${PREFIX}/`))).toEqual([]);
    expect(stored).not.toContain(token);
    expect({ consoleErrors, violations }).toEqual({ consoleErrors: [], violations: [] });
  }, 90_000);
});
