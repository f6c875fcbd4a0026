import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { seedPlants, signIn, startExampleApp, withChromiumAndNginx, type ExampleApp } from '../helpers/example-app';
import { storedPlant } from '../helpers/test-app';

const OUTPUT = path.resolve(__dirname, '..', '..', 'test-results', 'example-app');
const FERNS = [
  'Tree fern',
  'Asparagus fern',
  'Sword fern',
  "Bird's nest fern",
  'Boston fern',
  'Staghorn fern',
  'Blue star fern',
  'Fern-leaf lavender',
  'Holly fern',
  "Rabbit's foot fern",
  'Kangaroo fern',
  'Lemon button fern',
  'Maidenhair fern',
];
// By name without case, as the service orders them: "FERN" finds all 13, in two pages of 10.
const BY_NAME = [
  'Asparagus fern',
  "Bird's nest fern",
  'Blue star fern',
  'Boston fern',
  'Fern-leaf lavender',
  'Holly fern',
  'Kangaroo fern',
  'Lemon button fern',
  'Maidenhair fern',
  "Rabbit's foot fern",
  'Staghorn fern',
  'Sword fern',
  'Tree fern',
];
const FIRST = 7_000_000_000_000_000_001n;
const BOSTON = FIRST + BigInt(FERNS.indexOf('Boston fern'));
// Created last, so first in the second tab's "newest first".
const MOVER = FIRST + 100n;

withChromiumAndNginx('the example app searching while another tab renames (examples/web in Chromium, nginx with the service at /api/)', (executablePath) => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp(executablePath);
    await seedPlants(example, [...FERNS.map((name, index) => ({ id: FIRST + BigInt(index), name })), { id: FIRST + 50n, name: 'Monstera' }, { id: FIRST + 51n, name: 'Snake plant' }]);
    await seedPlants(example, [{ id: MOVER, name: 'Fiddle-leaf fig', tag: 'indoor' }]);
  }, 120_000);

  afterAll(() => example?.close());

  const names = (page: Page) => page.locator('#plants td.name').allTextContents();
  const count = (page: Page) => page.locator('#count').textContent();

  /** Saves the open editor and waits for it to close, which it does once the service has stored the edit. */
  async function save(page: Page): Promise<void> {
    await page.locator('#edit button[type=submit]').click();
    await page.locator('#editor').waitFor({ state: 'detached' });
  }

  /** Renames `id` from its row in `page`'s list. */
  async function rename(page: Page, id: bigint, name: string): Promise<void> {
    await page.locator(`#plants tr[data-id="${id}"] button.edit`).click();
    await page.locator('#edit-name').fill(name);
    await save(page);
  }

  it('when one tab searches "FERN" by name and the other renames a plant into, within and out of it, then the plant enters in place, moves past the loaded page until "Load more" brings it, and leaves, with the count; a bad name shows beside its field and a stale save the conflict', async () => {
    const searching = await signIn(example, [400, 412]);
    const renaming = await signIn(example, [400, 412]);

    await searching.locator('#sort').selectOption('name');
    await searching.locator('#search').fill('FERN');
    await searching.locator('#count', { hasText: '13 plants' }).waitFor();
    await searching.locator('#plants tr').nth(9).waitFor();
    const firstPage = await names(searching);

    await renaming.locator('#sort').selectOption('-createdAt');
    await renaming.locator(`#plants tr[data-id="${MOVER}"]`).waitFor();
    await rename(renaming, MOVER, 'Crocodile fern');
    await searching.locator(`#plants tr[data-id="${MOVER}"]`).waitFor({ timeout: 5000 });
    await searching.locator('#count', { hasText: '14 plants' }).waitFor({ timeout: 5000 });
    const entered = { names: await names(searching), count: await count(searching) };

    // Past the last loaded row: it leaves the rows shown and waits for "Load more", which brings it in its place.
    await rename(renaming, MOVER, 'Zebra fern');
    await searching.locator(`#plants tr[data-id="${MOVER}"]`).waitFor({ state: 'detached', timeout: 5000 });
    const movedPast = { names: await names(searching), count: await count(searching) };
    await searching.locator('#load-more').click();
    await searching.locator(`#plants tr[data-id="${MOVER}"] td.name`, { hasText: 'Zebra fern' }).waitFor({ timeout: 5000 });
    const allPages = { names: await names(searching), count: await count(searching), loadMoreHidden: await searching.locator('#load-more').isHidden() };

    await renaming.locator(`#plants tr[data-id="${MOVER}"] button.edit`).click();
    await renaming.locator('#edit-name').fill('f'.repeat(201));
    await renaming.locator('#edit button[type=submit]').click();
    await renaming.locator('#edit [data-error-for=name]', { hasText: 'must be' }).waitFor();
    const fieldError = {
      beside: await renaming.locator('#edit-name ~ [data-error-for=name]').textContent(),
      invalid: await renaming.locator('#edit-name').getAttribute('aria-invalid'),
      tagInvalid: await renaming.locator('#edit-tag').getAttribute('aria-invalid'),
    };
    await renaming.locator('#edit-name').fill('Fiddle-leaf fig');
    await save(renaming);
    await searching.locator(`#plants tr[data-id="${MOVER}"]`).waitFor({ state: 'detached', timeout: 5000 });
    await searching.locator('#count', { hasText: '13 plants' }).waitFor({ timeout: 5000 });
    const left = { names: await names(searching), count: await count(searching) };

    await searching.locator(`#plants tr[data-id="${BOSTON}"] button.edit`).click();
    await searching.locator('#edit-name').fill('Boston fern, kept');
    await renaming.locator('#search').fill('boston');
    await renaming.locator(`#plants tr[data-id="${BOSTON}"]`).waitFor();
    await rename(renaming, BOSTON, 'Boston fern, divided');
    await searching.locator(`#plants tr[data-id="${BOSTON}"] td.name`, { hasText: 'Boston fern, divided' }).waitFor({ timeout: 5000 });
    await searching.locator('#edit button[type=submit]').click();
    await searching.locator('#edit-reload').waitFor();
    const conflict = { message: await searching.locator('#edit-message').textContent(), kept: await searching.locator('#edit-name').inputValue() };
    mkdirSync(OUTPUT, { recursive: true });
    await searching.screenshot({ path: path.join(OUTPUT, 'example-app-search.png'), fullPage: true });

    expect(firstPage).toEqual(BY_NAME.slice(0, 10));
    // Whether the plant matched before is not in the event, so the count is read again with the first page (10).
    expect(entered).toEqual({ names: [...BY_NAME.slice(0, 4), 'Crocodile fern', ...BY_NAME.slice(4, 9)], count: '14 plants' });
    expect(movedPast).toEqual({ names: BY_NAME.slice(0, 9), count: '14 plants' });
    expect(allPages).toEqual({ names: [...BY_NAME, 'Zebra fern'], count: '14 plants', loadMoreHidden: true });
    expect(fieldError).toEqual({ beside: 'must be at most 200 characters (Unicode code points)', invalid: 'true', tagInvalid: 'false' });
    expect(left).toEqual({ names: BY_NAME, count: '13 plants' });
    expect(conflict).toEqual({
      message: 'Not saved: someone changed this plant after you opened it. It is now “Boston fern, divided” without a tag. Load that version to edit it again.',
      kept: 'Boston fern, kept',
    });
    expect(storedPlant(example.app, BOSTON)).toEqual({ id: BOSTON, name: 'Boston fern, divided', tag: null });
    expect(example.problems).toEqual([]);
  }, 90_000);
});
