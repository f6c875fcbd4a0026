import { randomBytes } from 'node:crypto';
import { createClient, newPlantId, type PlantQuery, type PlantStoreClient, type StoredPlant } from '../../clients/typescript/src/index';
import { watchPlants, type LivePlants, type LiveSnapshot } from '../../clients/typescript/src/live';
import { appForAll } from '../helpers/fixtures';
import { sleep } from '../helpers/common';
import { CLIENT_STORES } from '../helpers/client-stores';
import { TOKEN } from '../helpers/test-app';

const names = (plants: StoredPlant[]) => plants.map((plant) => plant.name);
const show = (snapshot: LiveSnapshot) => ({ status: snapshot.status, names: names(snapshot.plants), total: snapshot.total, hasMore: snapshot.hasMore });

/** Waits until the watcher's snapshot meets the condition; fails with what it last showed. */
async function until(live: LivePlants, met: (snapshot: LiveSnapshot) => boolean, timeoutMs = 5000): Promise<LiveSnapshot> {
  const start = Date.now();
  while (!met(live.getSnapshot())) {
    if (Date.now() - start > timeoutMs) throw new Error(`not met: ${JSON.stringify(show(live.getSnapshot()))}; error ${String(live.getSnapshot().error)}`);
    await sleep(10);
  }
  return live.getSnapshot();
}

/** Every plant of the query, as a fresh read lists them, and how many there are. */
async function listed(client: PlantStoreClient, query: PlantQuery): Promise<{ names: string[]; total?: number }> {
  const first = await client.listPlants({ ...query, limit: 1000, count: true });
  return { names: names(first.plants), total: first.total };
}

// Both stores: a change is placed by the client's order, which must be each store's, and each feed must miss nothing.
describe.each(CLIENT_STORES)('watchPlants (@plant-store/client/live) against the service on %s, written to by another client', (store) => {
  const app = appForAll({}, { store });
  const writer = () => createClient({ baseUrl: app.url, token: TOKEN });
  const reader = () => createClient({ baseUrl: app.url, token: TOKEN });
  let live: LivePlants | undefined;

  afterEach(() => live?.close());

  it('when plants enter, move, leave by rename and are deleted, then the sorted, filtered window converges to what a fresh read lists, total included', async () => {
    const tag = `live-${randomBytes(4).toString('hex')}`;
    const query = { q: 'FERN', tag, sort: 'name' as const };
    const [alpine, cinnamon, cactus, bird] = [newPlantId(), newPlantId(), newPlantId(), newPlantId()];
    await writer().createPlant({ id: alpine, name: 'Alpine fern', tag });
    await writer().createPlant({ id: cinnamon, name: 'Cinnamon ﬁddle fern', tag });
    await writer().createPlant({ id: cactus, name: 'Cactus', tag });
    live = watchPlants(reader(), query);
    const seen: LiveSnapshot[] = [];
    live.subscribe((snapshot) => seen.push(snapshot));
    const converged = async () => {
      const expected = await listed(writer(), query);
      const snapshot = await until(live as LivePlants, (current) => JSON.stringify(show(current)) === JSON.stringify({ status: 'live', ...expected, hasMore: false }));
      return { names: names(snapshot.plants), total: snapshot.total };
    };

    const loaded = await converged();
    await writer().createPlant({ id: bird, name: 'bird Fern', tag });
    const entered = await converged();
    await writer().updatePlant(alpine, { name: 'Ｚebra fern' });
    const moved = await converged();
    await writer().updatePlant(cactus, { name: 'Cactus fern' });
    const renamedIn = await converged();
    await writer().updatePlant(bird, { name: 'Bird of paradise' });
    const renamedOut = await converged();
    await writer().deletePlant(cinnamon);
    const deleted = await converged();

    expect({ loaded, entered, moved, renamedIn, renamedOut, deleted }).toEqual({
      loaded: { names: ['Alpine fern', 'Cinnamon ﬁddle fern'], total: 2 },
      entered: { names: ['Alpine fern', 'bird Fern', 'Cinnamon ﬁddle fern'], total: 3 },
      moved: { names: ['bird Fern', 'Cinnamon ﬁddle fern', 'Ｚebra fern'], total: 3 },
      renamedIn: { names: ['bird Fern', 'Cactus fern', 'Cinnamon ﬁddle fern', 'Ｚebra fern'], total: 4 },
      renamedOut: { names: ['Cactus fern', 'Cinnamon ﬁddle fern', 'Ｚebra fern'], total: 3 },
      deleted: { names: ['Cactus fern', 'Ｚebra fern'], total: 2 },
    });
    expect(seen[0]?.status).toBe('live');
  });

  it('when names of every kind enter a watcher sorted by name, then each lands where the service lists it', async () => {
    const tag = `live-names-${randomBytes(4).toString('hex')}`;
    const query = { tag, sort: 'name' as const };
    const kinds = ['\uFFFD replacement', '😀 grin', 'Straße', 'STRASSE', 'İstanbul', 'istanbul', 'ﬁg', 'Fig', 'fig', 'Émile', 'emile', 'Zz', 'a%_\\'];
    live = watchPlants(reader(), query);
    await until(live, (snapshot) => snapshot.status === 'live');

    for (const name of kinds) await writer().createPlant({ id: newPlantId(), name, tag });
    const expected = await listed(writer(), query);
    const snapshot = await until(live, (current) => current.plants.length === kinds.length);

    expect(names(snapshot.plants)).toEqual(expected.names);
    expect(snapshot.total).toBe(kinds.length);
  });

  it('when more pages follow, then changes past the window wait for loadMore, which joins each page in order with the changes made since', async () => {
    const tag = `live-pages-${randomBytes(4).toString('hex')}`;
    const query = { tag, sort: '-name' as const, limit: 2 };
    const ids = Array.from({ length: 5 }, () => newPlantId());
    for (const [index, id] of ids.entries()) await writer().createPlant({ id, name: `Plant ${index}`, tag });
    live = watchPlants(reader(), query);
    const first = await until(live, (snapshot) => snapshot.status === 'live');

    await writer().updatePlant(ids[4] as bigint, { name: 'Plant 0a' });
    await writer().createPlant({ id: newPlantId(), name: 'Plant 9', tag });
    await writer().deletePlant(ids[1] as bigint);
    const changed = await until(live, (snapshot) => snapshot.total === 5 && snapshot.plants[0]?.name === 'Plant 9');
    await changed.loadMore();
    await live.getSnapshot().loadMore();
    const all = live.getSnapshot();

    expect(show(first)).toEqual({ status: 'live', names: ['Plant 4', 'Plant 3'], total: 5, hasMore: true });
    expect(show(changed)).toEqual({ status: 'live', names: ['Plant 9', 'Plant 3'], total: 5, hasMore: true });
    expect(show(all)).toEqual({ status: 'live', ...(await listed(writer(), query)), hasMore: false });
    expect(names(all.plants)).toEqual(['Plant 9', 'Plant 3', 'Plant 2', 'Plant 0a', 'Plant 0']);
  });

  it('when others write while the first page loads, then nothing is missed and nothing comes twice', async () => {
    const tag = `live-race-${randomBytes(4).toString('hex')}`;
    const query = { tag, sort: 'createdAt' as const };
    const ids = Array.from({ length: 20 }, () => newPlantId());

    const writes = Promise.all(ids.map(async (id, index) => {
      await writer().createPlant({ id, name: `Racer ${index}`, tag });
      if (index % 3 === 0) await writer().updatePlant(id, { name: `Racer ${index} renamed` });
      if (index % 5 === 0) await writer().deletePlant(id);
    }));
    live = watchPlants(reader(), query);
    await writes;
    const expected = await listed(writer(), query);
    const snapshot = await until(live, (current) => current.status === 'live' && current.plants.length === expected.names.length && current.total === expected.total);

    expect(show(snapshot)).toEqual({ status: 'live', ...expected, hasMore: false });
    expect(new Set(snapshot.plants.map((plant) => plant.id)).size).toBe(16);
  });

  it('when the feed says reset, then the watcher reloads the first page and follows from its new position', async () => {
    const tag = `live-reset-${randomBytes(4).toString('hex')}`;
    const real = reader();
    let resets = 0;
    // The service sends reset when the position resumed from is no longer kept; here the first stream starts with one.
    const client: PlantStoreClient = {
      ...real,
      changes: (query) =>
        (async function* () {
          if (resets === 0) {
            resets += 1;
            yield { type: 'reset' as const, reason: 'expired' };
          }
          yield* real.changes(query);
        })(),
    };
    await writer().createPlant({ id: newPlantId(), name: 'Before', tag });
    live = watchPlants(client, { tag });
    const statuses: string[] = [];
    live.subscribe((snapshot) => statuses.push(snapshot.status));

    await until(live, (snapshot) => snapshot.status === 'live' && statuses.includes('reloading'));
    await writer().createPlant({ id: newPlantId(), name: 'After', tag });
    const after = await until(live, (snapshot) => snapshot.plants.length === 2);

    expect(statuses.slice(0, 3)).toEqual(['live', 'reloading', 'live']);
    expect({ names: names(after.plants).sort(), total: after.total }).toEqual({ names: ['After', 'Before'], total: 2 });
  });

  it('when the query breaks a rule, then the status is error with the service\'s answer, onError hears it, and no retry follows', async () => {
    const errors: unknown[] = [];
    live = watchPlants(reader(), { q: ' ' }, { onError: (error) => errors.push(error) });

    const failed = await until(live, (snapshot) => snapshot.status === 'error');
    await sleep(700);

    expect({ status: failed.status, error: (failed.error as { status?: number }).status, heard: errors.length }).toEqual({ status: 'error', error: 400, heard: 1 });
  });
});
