import { randomBytes } from 'node:crypto';
import type { Browser, Locator } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { describeWith } from '../helpers/optional-services';
import { startTestApp, storedPlant, type TestApp } from '../helpers/test-app';

describeWith('chromium', 'GET /docs in Chromium: ids past 2^53 exactly, both ways', (executablePath) => {
  const token = randomBytes(32).toString('hex');
  let app: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    app = await startTestApp({ AUTH_TOKENS: token });
    browser = await launchChromium(executablePath);
    await app.request.post('/plants').set({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }).send('{"id":9007199254740993,"name":"Exact on the docs page"}');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('when plant 9007199254740993 is fetched and 9007199254740995 created with try-it, then the page and the store keep every digit', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${app.url}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('.modal-ux input').first().fill(token);
    await page.locator('.modal-ux button.modal-btn.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();
    const tryOut = async (operationId: string): Promise<Locator> => {
      const operation = page.locator(`#operations-plants-${operationId}`);
      await operation.locator('.opblock-summary').first().click();
      await operation.locator('button.try-out__btn').click();
      return operation;
    };
    const answer = async (operation: Locator): Promise<string> => {
      await operation.locator('button.execute').click();
      const body = operation.locator('.live-responses-table .response-col_description pre').first();
      await body.waitFor({ timeout: 20_000 });
      return (await body.textContent()) ?? '';
    };

    const show = await tryOut('showPlantById');
    await show.locator('tr[data-param-name="id"] input').fill('9007199254740993');
    const shown = await answer(show);
    const add = await tryOut('addPlant');
    await add.locator('textarea.body-param__text').fill('{"id": 9007199254740995, "name": "Typed on the docs page"}');
    await answer(add);
    await page.close();

    expect(shown).toMatch(/^\{\n {2}"id": 9007199254740993,\n {2}"name": "Exact on the docs page",\n {2}"createdAt": "[^"]+",\n {2}"updatedAt": "[^"]+"\n\}$/);
    expect(storedPlant(app, 9007199254740995n)).toEqual({ id: 9007199254740995n, name: 'Typed on the docs page', tag: null });
    expect(storedPlant(app, 9007199254740996n)).toBeUndefined();
    expect(errors).toEqual([]);
  }, 90_000);
});
