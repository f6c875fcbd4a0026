/**
 * The example app (examples/web) as users get it, for the browser suites: vite's production build in a
 * directory of its own (suites build at the same time), the service behind the project's docker/nginx.conf,
 * and Debian's Chromium. Each signed-in tab reports its console errors and page errors into `problems`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, reportPolicyViolations } from './browser';
import { nginxAvailable, startNginx } from './nginx';
import { describeWith } from './optional-services';
import { startTestApp, type TestApp } from './test-app';

const ROOT = path.resolve(__dirname, '..', '..');

/** describeWith Chromium, and skipped with the nginx line when nginx is missing (failing under CI). */
export const withChromiumAndNginx = (name: string, body: (executablePath: string) => void): void =>
  nginxAvailable() ? describeWith('chromium', name, body) : describe.skip(name, () => body(''));

export type ExampleApp = {
  app: TestApp;
  token: string;
  proxy: { origin: string; stop: () => Promise<void> };
  browser: Browser;
  context: BrowserContext;
  /** Console errors, page errors and policy violations of every tab `signIn` opened. */
  problems: string[];
  /** Every URL those tabs requested. */
  requests: string[];
  close: () => Promise<void>;
};

export async function startExampleApp(executablePath: string): Promise<ExampleApp> {
  const token = randomBytes(32).toString('hex');
  const webRoot = mkdtempSync(path.join(os.tmpdir(), 'plants-web-'));
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn', '--outDir', webRoot, '--emptyOutDir'], {
    cwd: path.join(ROOT, 'examples', 'web'),
  });
  const app = await startTestApp({ AUTH_TOKENS: token, TRUST_PROXY: '1' });
  const proxy = await startNginx(Number(new URL(app.url).port), [], webRoot);
  const browser = await launchChromium(executablePath);
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  await reportPolicyViolations(context);
  return {
    app,
    token,
    proxy,
    browser,
    context,
    problems: [],
    requests: [],
    close: async () => {
      await context.close();
      await browser.close();
      await proxy.stop();
      await app.close();
      rmSync(webRoot, { recursive: true, force: true });
    },
  };
}

/**
 * A new tab, signed in, once the list is live. Chromium logs every 4xx fetch to the console: `provoked` lists
 * the statuses the test causes on purpose (a 400 field error, a 412 conflict), which are not problems.
 */
export async function signIn(example: ExampleApp, provoked: readonly number[] = []): Promise<Page> {
  const page = await example.context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && !provoked.some((status) => message.text().includes(`status of ${status}`))) example.problems.push(message.text());
  });
  page.on('pageerror', (error) => example.problems.push(error.message));
  page.on('request', (request) => example.requests.push(request.url()));
  await page.goto(`${example.proxy.origin}/`);
  await page.locator('#token').fill(example.token);
  await page.locator('#login button[type=submit]').click();
  await page.locator('#live-status', { hasText: 'Live' }).waitFor();
  return page;
}

/** Creates plants through the service directly (arrangement, not what the test is about). */
export async function seedPlants(example: ExampleApp, plants: readonly { id: bigint; name: string; tag?: string }[]): Promise<void> {
  for (const plant of plants) {
    const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
    const answer = await example.app.request
      .post('/plants')
      .set({ Authorization: `Bearer ${example.token}`, 'Content-Type': 'application/json' })
      .send(`{"id":${plant.id},"name":${JSON.stringify(plant.name)}${tag}}`);
    if (answer.status !== 201 && answer.status !== 200) throw new Error(`seeding ${plant.id} answered ${answer.status}: ${answer.text}`);
  }
}
