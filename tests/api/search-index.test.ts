import { uniqueId } from '../helpers/plants';
import { bearer, defaultStore, postPlant } from '../helpers/test-app';
import { appForAll, sleep } from '../helpers/fixtures';
import type { Listed } from '../helpers/plant-lists';

/**
 * SQLite's search index (migrations/sqlite/010), written behind the commits: whatever it holds or lags, a search
 * answers what the rows hold. PostgreSQL's trigram index is kept in its commit; list-stores-agree covers it.
 */
const suite = defaultStore() === 'sqlite' ? describe : describe.skip;

suite('the SQLite search index', () => {
  const app = appForAll();
  const state = () => app.inspect().prepare('SELECT indexed_pos, build_pos FROM plants_search_state').get() as { indexed_pos: bigint | null; build_pos: bigint | null };
  const last = () => app.inspect().prepare("SELECT seq FROM sqlite_sequence WHERE name = 'plant_events'").pluck().get() as bigint;
  const caughtUp = async () => {
    for (let waited = 0; state().indexed_pos !== last(); waited += 20) {
      if (waited > 10_000) throw new Error(`search index not caught up: ${JSON.stringify(state(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
      await sleep(20);
    }
  };
  const names = async (query: string) => ((await app.request.get(`/plants?${query}`).set(bearer())).body as Listed[]).map((plant) => plant.name);

  it('when the indexer has caught up, then a search through the index answers as the scan does, renames and deletes included', async () => {
    const word = `idx${uniqueId()}`;
    const ids = [uniqueId(), uniqueId(), uniqueId()];
    for (const [index, id] of ids.entries()) expect((await postPlant(app, { id, name: `Fern ${word} ${index}` })).status).toBe(200);
    await app.request.patch(`/plants/${ids[0]}`).set({ 'Content-Type': 'application/json', ...bearer() }).send('{"name":"Palm"}');
    await app.request.delete(`/plants/${ids[1]}`).set(bearer());
    await caughtUp();

    expect({ indexed: await names(`q=${word}&sort=name`), short: await names(`q=${word.slice(0, 2)}&tag=none`) }).toEqual({ indexed: [`Fern ${word} 2`], short: [] });
  });

  it('when the index lags the commits, then plants changed after what it covers are found from their events', async () => {
    await caughtUp();
    const word = `lag${uniqueId()}`;
    const before = last();
    const id = uniqueId();
    expect((await postPlant(app, { id, name: `Ivy ${word}` })).status).toBe(200);
    await caughtUp();
    // As if the indexer had not come to it yet: the plant is not in the index, and the index covers only before it.
    app.db.prepare('DELETE FROM plants_search WHERE rowid = ?').run(BigInt(id));
    app.db.prepare('UPDATE plants_search_state SET indexed_pos = ?').run(before);

    const found = await app.request.get(`/plants?q=${word}`).set({ ...bearer(), Prefer: 'count=exact' });

    expect({ names: (found.body as Listed[]).map((plant) => plant.name), total: found.headers['x-total-count'] }).toEqual({ names: [`Ivy ${word}`], total: '1' });
  });

  it('when the index is gone (never built, or its events pruned), then searches scan and the indexer builds it again from the plants', async () => {
    const word = `gone${uniqueId()}`;
    expect((await postPlant(app, { id: uniqueId(), name: `Aloe ${word}` })).status).toBe(200);
    await caughtUp();
    app.db.prepare('DELETE FROM plants_search').run();
    app.db.prepare('UPDATE plants_search_state SET indexed_pos = NULL, build_pos = NULL, build_after_id = NULL').run();

    const scanned = await names(`q=${word}`);
    expect((await postPlant(app, { id: uniqueId(), name: 'Wake the indexer' })).status).toBe(200);
    await caughtUp();

    expect({ scanned, indexed: await names(`q=${word}`), count: app.inspect().prepare('SELECT count(*) FROM plants_search').pluck().get() }).toEqual({
      scanned: [`Aloe ${word}`],
      indexed: [`Aloe ${word}`],
      count: app.inspect().prepare('SELECT count(*) FROM plants').pluck().get(),
    });
  });
});
