import type { Page } from 'playwright-core';
import { withChromiumAndNginx } from '../helpers/example-app';
import { openApp, signInThroughProvider, startSignInStack, type SignInStack } from '../helpers/oidc-idp';
import { startServer } from '../helpers/server-process';

const ids = (page: Page) => page.locator('#plants td.id').allTextContents();
const names = (page: Page) => page.locator('#plants td.name').allTextContents();

/** Creates a plant through the form; resolves with what the form then says, success or the service's refusal. */
async function create(page: Page, id: string, name: string): Promise<string | null> {
  const before = await page.locator('#create-message').textContent();
  await page.locator('#plant-id').fill(id);
  await page.locator('#plant-name').fill(name);
  await page.locator('#create button[type=submit]').click();
  // Polled from here: the page's policy allows no string evaluation (waitForFunction's).
  for (let waited = 0; waited < 10_000; waited += 50) {
    const said = await page.locator('#create-message').textContent();
    if (said !== before) return said;
    await page.waitForTimeout(50);
  }
  return before;
}

/** Runs `act`, then waits for the list it makes the page read (GET /api/plants) and for the rows to be drawn. */
async function listedAfter(page: Page, act: () => Promise<unknown>): Promise<void> {
  await Promise.all([page.waitForResponse((response) => new URL(response.url()).pathname === '/api/plants' && response.request().method() === 'GET'), act()]);
  await page.locator('#count', { hasText: /plant/ }).waitFor();
  await page.waitForTimeout(200);
}

withChromiumAndNginx('two users of the example app, each signed in with the demo provider, in a tenant of their own (TENANT_CLAIM=sub), in Chromium', (executablePath) => {
  let stack: SignInStack;

  beforeAll(async () => {
    stack = await startSignInStack(executablePath, async (env) => {
      const service = await startServer({ ...env, AUTH_TOKENS: '', TENANT_CLAIM: 'sub' });
      return { port: Number(new URL(service.url).port), close: async () => void (await service.stop()) };
    });
  }, 120_000);

  afterAll(() => stack?.close());

  it('when alice and bob both create plant 1, then each lists, searches, counts and streams only their own, and a reload keeps each in their own', async () => {
    const [aliceContext, bobContext] = [await stack.newPerson(), await stack.newPerson()];
    const [alice, bob] = [await openApp(stack, aliceContext), await openApp(stack, bobContext)];
    await signInThroughProvider(alice, 'alice');
    await signInThroughProvider(bob, 'bob');

    const created = [await create(alice, '1', 'Fern of alice'), await create(bob, '1', 'Fern of bob')];
    await alice.locator('#count', { hasText: '1 plant' }).waitFor();
    await bob.locator('#count', { hasText: '1 plant' }).waitFor();
    const listed = { alice: await names(alice), bob: await names(bob) };
    // A second tab each, signed in silently through the provider's session, following its own user's feed.
    const [aliceLive, bobLive] = [await openApp(stack, aliceContext), await openApp(stack, bobContext)];
    for (const page of [aliceLive, bobLive]) await page.locator('#live-status', { hasText: 'Live' }).waitFor();
    // Events come in position order: once a later change of its own user arrives, an earlier one of the other
    // user's would have arrived before it.
    await create(bob, '2', 'Fern of bob, the second');
    await bobLive.locator('#plants tr[data-id="2"]').waitFor();
    await create(alice, '3', 'Fern of alice, the second');
    await aliceLive.locator('#plants tr[data-id="3"]').waitFor();
    await create(bob, '4', 'Fern of bob, the third');
    await bobLive.locator('#plants tr[data-id="4"]').waitFor();
    const streamed = { alice: (await ids(aliceLive)).sort(), bob: (await ids(bobLive)).sort() };
    await Promise.all([alice, bob].map((page) => listedAfter(page, () => page.locator('#search').fill('Fern'))));
    const searched = { alice: (await names(alice)).sort(), bob: (await names(bob)).sort() };
    const counted = { alice: await alice.locator('#count').textContent(), bob: await bob.locator('#count').textContent() };
    await listedAfter(alice, () => alice.reload());
    const afterReload = { user: await alice.locator('#user').textContent(), ids: (await ids(alice)).sort() };

    expect(created).toEqual(['Created Fern of alice with id 1.', 'Created Fern of bob with id 1.']);
    expect(listed).toEqual({ alice: ['Fern of alice'], bob: ['Fern of bob'] });
    expect(streamed).toEqual({ alice: ['1', '3'], bob: ['1', '2', '4'] });
    expect(searched).toEqual({ alice: ['Fern of alice', 'Fern of alice, the second'], bob: ['Fern of bob', 'Fern of bob, the second', 'Fern of bob, the third'] });
    expect(counted).toEqual({ alice: '2 plants', bob: '3 plants' });
    expect(afterReload).toEqual({ user: 'alice', ids: ['1', '3'] });
    expect(stack.problems).toEqual([]);
  }, 120_000);
});
