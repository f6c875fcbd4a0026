import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { startIdentityProvider, type IdentityProvider } from '../helpers/identity-provider';
import { describeWith } from '../helpers/optional-services';
import { uniqueId } from '../helpers/plants';
import { startTestApp, storedRows, type TestApp } from '../helpers/test-app';

type PageResult = { status: number; challenge: string | null; body: unknown };

describeWith('chromium', 'a front end on an allowed origin calling the API with a JWT, in Chromium', (executablePath) => {
  let idp: IdentityProvider;
  let app: TestApp;
  let site: http.Server;
  let origin: string;
  let browser: Browser;

  beforeAll(async () => {
    // The front end's own origin: another port of 127.0.0.1, so every call to the API is cross-origin.
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>plants front end</title>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    idp = await startIdentityProvider();
    app = await startTestApp({ ...idp.env(), CORS_ORIGINS: origin });
    browser = await launchChromium(executablePath);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp?.stop();
    site?.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
  });

  /** Runs fetch in the page, as a front end's code would, and returns what that code can read. */
  async function postFromPage(token: string, plant: Record<string, unknown>): Promise<PageResult> {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      // Page-side code as text: this project's TypeScript has no DOM types.
      return await page.evaluate<PageResult>(`(async () => {
        const response = await fetch(${JSON.stringify(`${app.url}/plants`)}, {
          method: 'POST',
          headers: { Authorization: ${JSON.stringify(`Bearer ${token}`)}, 'Content-Type': 'application/json' },
          body: ${JSON.stringify(JSON.stringify(plant))},
        });
        return { status: response.status, challenge: response.headers.get('WWW-Authenticate'), body: await response.json() };
      })()`);
    } finally {
      await page.close();
    }
  }

  it('when the JWT lacks plants:write, then the page reads the 403 Error body and the insufficient_scope challenge', async () => {
    const id = uniqueId();

    const result = await postFromPage(await idp.mint({ scope: 'openid plants:read' }), { id, name: 'Fern' });

    expect(result).toEqual({
      status: 403,
      challenge: 'Bearer realm="plants", error="insufficient_scope", scope="plants:write"',
      body: { error: 40301, message: 'This token lacks the plants:write scope, which POST needs.' },
    });
    expect(storedRows(app).some((row) => row.id === BigInt(id))).toBe(false);
  });

  it('when the JWT grants plants:write, then the page creates the plant', async () => {
    const id = uniqueId();

    const result = await postFromPage(await idp.mint({ sub: 'browser-user' }), { id, name: 'Fern', tag: 'shade' });

    expect(result).toEqual({ status: 200, challenge: null, body: { name: 'Fern', tag: 'shade' } });
    expect(storedRows(app).some((row) => row.id === BigInt(id))).toBe(true);
  });
});
