import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { signIn, startExampleApp, withChromiumAndNginx, type ExampleApp } from '../helpers/example-app';
import { storedPlant } from '../helpers/test-app';

const ROOT = path.resolve(__dirname, '..', '..');
const OUTPUT = path.join(ROOT, 'test-results', 'example-app');
const BIG = 9007199254740993n;
const ROW = `#plants tr[data-id="${BIG}"]`;

// The little of the DOM the page function reads (the tests compile without the DOM library).
type InputLookup = { getElementById: (id: string) => { value: string } | null };

withChromiumAndNginx('the example app live in two tabs (examples/web in Chromium, nginx with the service at /api/)', (executablePath) => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp(executablePath);
  }, 120_000);

  afterAll(() => example?.close());

  // The one 412 here is the conflict the test provokes.
  const signedIn = () => signIn(example, [412]);

  /** Milliseconds until `shown` resolves, counted from now (the other tab's action has just been confirmed). */
  async function latency(shown: Promise<unknown>): Promise<number> {
    const start = Date.now();
    await shown;
    return Date.now() - start;
  }

  // Page-side code as text: this project's TypeScript has no DOM types.
  // A function, not a string: the page's policy (script-src 'self') refuses the eval a string predicate needs.
  const nameIs = (page: Page, value: string) =>
    page.waitForFunction((expected) => (globalThis as unknown as { document: InputLookup }).document.getElementById('edit-name')?.value === expected, value);
  const cells = (page: Page) => page.locator(ROW).locator('td.name, td.tag').allTextContents();

  it('when one tab creates, edits and deletes plant 9007199254740993, then the other shows each change within a second, and its stale edit shows the conflict', async () => {
    const first = await signedIn();
    const second = await signedIn();

    await first.locator('#plant-id').fill(BIG.toString());
    await first.locator('#plant-name').fill('Fern');
    await first.locator('#plant-tag').fill('shade');
    await first.locator('#create button[type=submit]').click();
    await first.locator('#create-message', { hasText: 'Created' }).waitFor();
    const created = await latency(second.locator(ROW).waitFor({ timeout: 5000 }));
    const createdCells = await cells(second);

    await second.locator(`${ROW} button.edit`).click();
    await second.locator('#editor').waitFor();
    await nameIs(second, 'Fern');
    await first.locator(`${ROW} button.edit`).click();
    await nameIs(first, 'Fern');
    await first.locator('#edit-name').fill('Fern from the first tab');
    await first.locator('#edit-tag').fill('sun');
    await first.locator('#edit button[type=submit]').click();
    await first.locator('#list-message', { hasText: 'Saved' }).waitFor();
    const edited = await latency(second.locator(`${ROW} td.name`, { hasText: 'Fern from the first tab' }).waitFor({ timeout: 5000 }));
    const editedCells = await cells(second);

    await second.locator('#edit-name').fill('Fern from the second tab');
    await second.locator('#edit button[type=submit]').click();
    await second.locator('#edit-message', { hasText: 'Not saved' }).waitFor();
    const conflict = await second.locator('#edit-message').textContent();
    const keptTyping = await second.locator('#edit-name').inputValue();
    const storedAfterConflict = storedPlant(example.app, BIG);
    mkdirSync(OUTPUT, { recursive: true });
    await second.screenshot({ path: path.join(OUTPUT, 'example-app-conflict.png'), fullPage: true });

    await second.locator('#edit-reload').click();
    await nameIs(second, 'Fern from the first tab');
    await second.locator('#edit-tag').fill('');
    await second.locator('#edit button[type=submit]').click();
    await second.locator('#list-message', { hasText: 'Saved' }).waitFor();
    const retagged = await latency(first.locator(`${ROW} td.tag`, { hasText: /^$/ }).waitFor({ timeout: 5000 }));
    const retaggedCells = await cells(first);

    await first.locator(`${ROW} button.delete`).click();
    await first.locator('#list-message', { hasText: 'Deleted' }).waitFor();
    const deleted = await latency(second.locator(ROW).waitFor({ state: 'detached', timeout: 5000 }));
    await first.screenshot({ path: path.join(OUTPUT, 'example-app-live.png'), fullPage: true });
    writeFileSync(path.join(OUTPUT, 'live-latencies.json'), `${JSON.stringify({ created, edited, retagged, deleted })}\n`);

    expect(createdCells).toEqual(['Fern', 'shade']);
    expect(editedCells).toEqual(['Fern from the first tab', 'sun']);
    expect({ conflict, keptTyping }).toEqual({
      conflict: 'Not saved: someone changed this plant after you opened it. It is now “Fern from the first tab” tagged sun. Load that version to edit it again.',
      keptTyping: 'Fern from the second tab',
    });
    expect(storedAfterConflict).toEqual({ id: BIG, name: 'Fern from the first tab', tag: 'sun' });
    expect(retaggedCells).toEqual(['Fern from the first tab', '']);
    expect(storedPlant(example.app, BIG)).toBeUndefined();
    expect(Object.entries({ created, edited, retagged, deleted }).filter(([, ms]) => ms >= 1000)).toEqual([]);
    expect(example.problems).toEqual([]);
  }, 90_000);
});
