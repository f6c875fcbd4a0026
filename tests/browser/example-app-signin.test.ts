import type { Page } from 'playwright-core';
import { withChromiumAndNginx } from '../helpers/example-app';
import { openApp, signInThroughProvider, startSignInStack, type SignInStack } from '../helpers/oidc-idp';
import { uniqueId } from '../helpers/plants';
import { startTestApp, storedPlant, type TestApp } from '../helpers/test-app';

const JWT_SHAPE = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/;
const IDP_POLICY = "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** What the page keeps across a reload: web storage and this origin's cookies as script sees them. */
const kept = (page: Page) =>
  page.evaluate<{ localLength: number; session: Record<string, string>; cookie: string }>('({ localLength: localStorage.length, session: { ...sessionStorage }, cookie: document.cookie })');

const claimsOf = (jwt: string): [Record<string, unknown>, Record<string, unknown>] =>
  jwt.split('.').slice(0, 2).map((part): Record<string, unknown> => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>) as [Record<string, unknown>, Record<string, unknown>];

withChromiumAndNginx('the example app signing in with the demo OpenID provider (examples/idp) behind nginx, in Chromium', (executablePath) => {
  let stack: SignInStack;
  let app: TestApp;

  beforeAll(async () => {
    stack = await startSignInStack(executablePath, async (env) => {
      app = await startTestApp(env);
      return { port: Number(new URL(app.url).port), close: () => app.close() };
    });
  }, 120_000);

  afterAll(() => stack?.close());

  it('when alice signs in on the provider\'s page, then the app lists and creates plants with the ES256 JWT the provider issued, a reload keeps her signed in with no token in web storage, and signing out ends it', async () => {
    const page = await openApp(stack, await stack.newPerson());
    const bearers = new Set<string>();
    page.on('request', (request) => {
      const authorization = request.headers().authorization;
      if (request.url().startsWith(`${stack.origin}/api/`) && authorization !== undefined) bearers.add(authorization.replace(/^Bearer /, ''));
    });
    const id = BigInt(uniqueId());

    await page.locator('#sign-in-button').waitFor();
    const beforeSignIn = await kept(page);
    const providerPage = await signInThroughProvider(page, 'alice');
    const loginPolicy = (await page.context().request.get(providerPage)).headers()['content-security-policy'];
    await page.locator('#plant-id').fill(id.toString());
    await page.locator('#plant-name').fill('Signed-in fern');
    await page.locator('#create button[type=submit]').click();
    await page.locator('#create-message', { hasText: 'Created' }).waitFor();
    await page.locator(`#plants tr[data-id="${id}"]`).waitFor();
    const [token] = [...bearers];

    await page.reload();
    await page.locator('#user', { hasText: 'alice' }).waitFor();
    await page.locator(`#plants tr[data-id="${id}"]`).waitFor();
    const afterReload = await kept(page);

    await page.locator('#sign-out').click();
    await page.locator('#idp-logout').click();
    await page.locator('#sign-in-button').waitFor();
    const signedOutAt = page.url();
    await page.reload();
    await page.locator('#sign-in-button').waitFor();
    const afterSignOutReload = await kept(page);
    const tokenFormShown = await page.locator('#token').isVisible();

    expect(new URL(providerPage).pathname).toMatch(/^\/idp\/interaction\/[\w-]+$/);
    expect(loginPolicy).toBe(IDP_POLICY);
    expect(beforeSignIn.localLength).toBe(0);
    expect(bearers.size).toBe(2);
    const [header, claims] = claimsOf(token ?? '');
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(claims).toMatchObject({ iss: `${stack.origin}/idp`, aud: 'plant-store', sub: 'alice', client_id: 'plant-store-web', org_id: 'greenhouse' });
    expect(String(claims.scope).split(' ').sort()).toEqual(['plants:read', 'plants:write']);
    expect(storedPlant(app, id)).toEqual({ id, name: 'Signed-in fern', tag: null });
    expect(app.logs.filter((line) => line.msg === 'request' && line.method === 'POST').map((line) => line.caller)).toContain('sub:alice');
    for (const state of [afterReload, afterSignOutReload]) {
      expect(state.localLength).toBe(0);
      expect(Object.values(state.session).filter((value) => JWT_SHAPE.test(value))).toEqual([]);
      expect(state.cookie).not.toMatch(JWT_SHAPE);
    }
    expect(new URL(signedOutAt).pathname).toBe('/');
    expect(tokenFormShown).toBe(true);
    expect(stack.problems).toEqual([]);
  }, 90_000);

  it('when a wrong password is typed on the provider\'s page, then the page says so with the user kept, and the right one then signs bob in', async () => {
    const page = await openApp(stack, await stack.newPerson());

    await page.locator('#sign-in-button').click();
    await page.locator('#idp-username').fill('bob');
    await page.locator('#idp-password').fill('not the password');
    await page.locator('#idp-login button[type=submit]').click();
    const problem = await page.locator('#idp-problem').textContent();
    const keptUser = await page.locator('#idp-username').inputValue();
    const signedIn = await page.locator('#user').count();
    await page.locator('#idp-password').fill('plants');
    await page.locator('#idp-login button[type=submit]').click();
    await page.locator('#user', { hasText: 'bob' }).waitFor();

    expect({ problem, keptUser, signedIn }).toEqual({ problem: 'Unknown user or wrong password.', keptUser: 'bob', signedIn: 0 });
    // The provider's 401 page is logged by Chromium as a failed resource; nothing else is a problem.
    expect(stack.problems.filter((text) => !text.includes('status of 401'))).toEqual([]);
  }, 60_000);
});
