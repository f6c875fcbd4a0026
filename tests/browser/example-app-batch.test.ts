import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { seedPlants, signIn, startExampleApp, withChromiumAndNginx, type ExampleApp } from '../helpers/example-app';

const ROOT = path.resolve(__dirname, '..', '..');
const OUTPUT = path.join(ROOT, 'test-results', 'example-app');
const BIG = 9007199254740993n;

withChromiumAndNginx('the example app acting on a selection in one batch (examples/web in Chromium, nginx with the service at /api/)', (executablePath) => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp(executablePath);
  }, 120_000);

  afterAll(() => example?.close());

  const authorization = () => ({ Authorization: `Bearer ${example.token}` });
  const getPlant = async (id: bigint) => {
    const answer = await example.app.request.get(`/plants/${id}`).set(authorization());
    return { status: answer.status, name: (answer.body as { name?: string }).name, tag: (answer.body as { tag?: string }).tag };
  };
  const batchesSent = () => example.requests.filter((url) => new URL(url).pathname === '/api/plants/batch').length;
  const row = (page: Page, id: bigint) => page.locator(`#plants tr[data-id="${id}"]`);

  /** Ticks each plant's box by its accessible name, then waits until every version is read (the actions enable). */
  async function select(page: Page, names: readonly string[]): Promise<void> {
    for (const name of names) await page.getByRole('checkbox', { name: `Select ${name}` }).check();
    await page.getByRole('button', { name: 'Delete selected' }).and(page.locator(':enabled')).waitFor();
  }

  it('when three plants are selected and retagged, then the list shows the new tag on all three, the service stores it, and the selection is cleared', async () => {
    const plants = [1n, 2n, 3n].map((offset) => ({ id: BIG + offset, name: `Retag ${offset}`, tag: 'shade' }));
    await seedPlants(example, plants);
    const page = await signIn(example);
    await row(page, plants[2]!.id).waitFor();

    await select(page, plants.map((plant) => plant.name));
    const selectionLine = await page.locator('#selection').textContent();
    await page.getByLabel('New tag').fill('sun');
    const batchesBefore = batchesSent();
    await page.getByRole('button', { name: 'Retag selected' }).click();
    await page.locator('#batch-message', { hasText: 'Tagged' }).waitFor();
    const batches = batchesSent() - batchesBefore;
    const message = await page.locator('#batch-message').textContent();
    const shownTags = await Promise.all(plants.map((plant) => row(page, plant.id).locator('td.tag').textContent()));
    const checked = await Promise.all(plants.map((plant) => page.getByRole('checkbox', { name: `Select ${plant.name}` }).isChecked()));
    const stored = await Promise.all(plants.map((plant) => getPlant(plant.id)));

    expect(selectionLine).toBe('Selected (3): Retag 1, Retag 2, Retag 3.');
    expect(message).toBe('Tagged 3 plants “sun”.');
    expect(batches).toBe(1);
    expect(shownTags).toEqual(['sun', 'sun', 'sun']);
    expect(checked).toEqual([false, false, false]);
    expect(await page.locator('#selection').textContent()).toBe('No plants selected.');
    expect(stored).toEqual(plants.map((plant) => ({ status: 200, name: plant.name, tag: 'sun' })));
    expect(example.problems).toEqual([]);
  }, 60_000);

  it('when one of three selected plants is deleted by another client before "Delete selected", then the app names that plant, says nothing changed, and the other two stay in the list and the store', async () => {
    const plants = [11n, 12n, 13n].map((offset) => ({ id: BIG + offset, name: `Delete ${offset}` }));
    await seedPlants(example, plants);
    // The one 404 here is the batch's, which the test provokes.
    const page = await signIn(example, [404]);
    await row(page, plants[2]!.id).waitFor();
    const [first, gone, last] = plants as [(typeof plants)[0], (typeof plants)[0], (typeof plants)[0]];

    await select(page, plants.map((plant) => plant.name));
    const deletedElsewhere = await example.app.request.delete(`/plants/${gone.id}`).set(authorization());
    await row(page, gone.id).waitFor({ state: 'detached', timeout: 5000 });
    const stillSelected = await page.locator('#selection').textContent();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.locator('#batch-message', { hasText: 'Nothing was changed' }).waitFor();
    const message = await page.locator('#batch-message').textContent();
    await row(page, first.id).waitFor();
    await row(page, last.id).waitFor();
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'example-app-batch-failed.png'), fullPage: true });
    const shownNames = await page.locator('#plants td.name').allTextContents();
    const stored = await Promise.all(plants.map((plant) => getPlant(plant.id)));

    expect(deletedElsewhere.status).toBe(204);
    expect(stillSelected).toBe('Selected (3): Delete 11, Delete 12, Delete 13.');
    expect(message).toBe(`Nothing was changed. Plant ${gone.id} “Delete 12” failed (it was deleted elsewhere): id: no plant has id ${gone.id}. (error 40402) It is no longer selected.`);
    expect(shownNames).toEqual(expect.arrayContaining(['Delete 11', 'Delete 13']));
    expect(shownNames).not.toContain('Delete 12');
    expect(await page.locator('#selection').textContent()).toBe('Selected (2): Delete 11, Delete 13.');
    expect(stored).toEqual([
      { status: 200, name: 'Delete 11', tag: undefined },
      { status: 404, name: undefined, tag: undefined },
      { status: 200, name: 'Delete 13', tag: undefined },
    ]);
    expect(example.problems).toEqual([]);
  }, 60_000);

  it('when one of two selected plants is renamed by another client before "Retag selected", then its If-Match fails the batch: the app names it, neither plant is retagged, and the list shows the new name', async () => {
    const plants = [21n, 22n].map((offset) => ({ id: BIG + offset, name: `Stale ${offset}`, tag: 'shade' }));
    await seedPlants(example, plants);
    // The one 412 here is the batch's, which the test provokes.
    const page = await signIn(example, [412]);
    await row(page, plants[1]!.id).waitFor();
    const changed = plants[1]!;

    await select(page, plants.map((plant) => plant.name));
    const renamedElsewhere = await example.app.request
      .patch(`/plants/${changed.id}`)
      .set({ ...authorization(), 'Content-Type': 'application/merge-patch+json' })
      .send('{"name":"Renamed elsewhere"}');
    await row(page, changed.id).locator('td.name', { hasText: 'Renamed elsewhere' }).waitFor({ timeout: 5000 });
    await page.getByLabel('New tag').fill('sun');
    await page.getByRole('button', { name: 'Retag selected' }).click();
    await page.locator('#batch-message', { hasText: 'Nothing was changed' }).waitFor();
    const message = await page.locator('#batch-message').textContent();
    const shownTags = await Promise.all(plants.map((plant) => row(page, plant.id).locator('td.tag').textContent()));
    const stored = await Promise.all(plants.map((plant) => getPlant(plant.id)));

    expect(renamedElsewhere.status).toBe(200);
    expect(message).toBe(
      `Nothing was changed. Plant ${changed.id} “Stale 22” failed (it was changed elsewhere after you selected it): If-Match: plant ${changed.id} has changed (its ETag is now ${renamedElsewhere.headers.etag}); nothing was changed. GET it again, then retry with its new ETag. (error 41201) It is no longer selected: select it again to act on it as it is now.`,
    );
    expect(shownTags).toEqual(['shade', 'shade']);
    expect(stored).toEqual([
      { status: 200, name: 'Stale 21', tag: 'shade' },
      { status: 200, name: 'Renamed elsewhere', tag: 'shade' },
    ]);
    expect(await page.locator('#selection').textContent()).toBe('Selected (1): Stale 21.');
    expect(example.problems).toEqual([]);
  }, 60_000);

  it('when "Select every plant shown" is ticked, unticked, ticked again and the tag is emptied, then every plant shown loses its tag in one batch', async () => {
    await seedPlants(example, [31n, 32n].map((offset) => ({ id: BIG + offset, name: `All ${offset}`, tag: 'shade' })));
    const page = await signIn(example);
    await row(page, BIG + 32n).waitFor();
    const ids = (await page.locator('#plants tr').evaluateAll((rows) => rows.map((tr) => (tr as unknown as { dataset: { id: string } }).dataset.id))).map(BigInt);
    const selectAll = page.getByRole('checkbox', { name: 'Select every plant shown' });

    await selectAll.check();
    await page.getByRole('button', { name: 'Delete selected' }).and(page.locator(':enabled')).waitFor();
    const allLine = await page.locator('#selection').textContent();
    await selectAll.uncheck();
    const noneLine = await page.locator('#selection').textContent();
    await selectAll.check();
    await page.getByRole('button', { name: 'Retag selected' }).and(page.locator(':enabled')).waitFor();
    await page.getByLabel('New tag').fill('');
    const batchesBefore = batchesSent();
    await page.getByRole('button', { name: 'Retag selected' }).click();
    await page.locator('#batch-message', { hasText: 'Removed' }).waitFor();
    const batches = batchesSent() - batchesBefore;
    const message = await page.locator('#batch-message').textContent();
    const shownTags = await page.locator('#plants td.tag').allTextContents();
    const stored = await Promise.all(ids.map((id) => getPlant(id)));

    expect(ids.length).toBeGreaterThan(2);
    expect(allLine).toMatch(new RegExp(`^Selected \\(${ids.length}\\): All 32, All 31, `));
    expect(noneLine).toBe('No plants selected.');
    expect(message).toBe(`Removed the tag of ${ids.length} plants.`);
    expect(batches).toBe(1);
    expect(shownTags).toEqual(ids.map(() => ''));
    expect(stored.map((plant) => ({ status: plant.status, tag: plant.tag }))).toEqual(ids.map(() => ({ status: 200, tag: undefined })));
    expect(example.problems).toEqual([]);
  }, 60_000);

  it('when a selected plant is edited and another deleted in this tab, then the selection holds the edited version and drops the deleted one, and "Retag selected" succeeds', async () => {
    const [edited, deleted] = [41n, 42n].map((offset) => ({ id: BIG + offset, name: `Own ${offset}` })) as [{ id: bigint; name: string }, { id: bigint; name: string }];
    await seedPlants(example, [edited, deleted]);
    const page = await signIn(example);
    await row(page, deleted.id).waitFor();

    await select(page, [edited.name, deleted.name]);
    await row(page, edited.id).locator('button.edit').click();
    await page.locator('#edit-name').fill('Own edited');
    await page.locator('#edit button[type=submit]').click();
    await page.locator('#list-message', { hasText: 'Saved' }).waitFor();
    await row(page, deleted.id).locator('button.delete').click();
    await page.locator('#list-message', { hasText: 'Deleted' }).waitFor();
    await page.getByRole('button', { name: 'Retag selected' }).and(page.locator(':enabled')).waitFor();
    const selectionLine = await page.locator('#selection').textContent();
    await page.getByLabel('New tag').fill('sun');
    await page.getByRole('button', { name: 'Retag selected' }).click();
    await page.locator('#batch-message:not(:empty)').waitFor();
    const message = await page.locator('#batch-message').textContent();

    expect(selectionLine).toBe('Selected (1): Own edited.');
    expect(message).toBe('Tagged 1 plant “sun”.');
    expect(await getPlant(edited.id)).toEqual({ status: 200, name: 'Own edited', tag: 'sun' });
    expect(example.problems).toEqual([]);
  }, 60_000);
});

