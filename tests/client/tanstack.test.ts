import { randomBytes } from 'node:crypto';
import { createClient, newPlantId, PlantStoreError, type Page, type PlantQuery, type PlantStoreClient, type StoredPlant } from '../../clients/typescript/src/index';
import { plantQueries } from '../../clients/typescript/src/tanstack';
import { appForAll } from '../helpers/fixtures';
import { CLIENT_STORES, core, until, type Core, type InfiniteData } from '../helpers/client-stores';
import { TOKEN } from '../helpers/test-app';

const { InfiniteQueryObserver, MutationObserver, QueryClient, QueryObserver } = core;

const names = (plants: StoredPlant[] | undefined) => (plants ?? []).map((plant) => plant.name);

// Both stores: a change is placed by the client's order, which must be each store's, and each feed must miss nothing.
describe.each(CLIENT_STORES)('plantQueries (@plant-store/client/tanstack) with a real QueryClient against the service on %s', (store) => {
  const app = appForAll({}, { store });
  const writer = () => createClient({ baseUrl: app.url, token: TOKEN });
  let queries: ReturnType<typeof plantQueries>;
  let queryClient: InstanceType<Core['QueryClient']>;
  const stops: (() => void)[] = [];

  beforeEach(() => {
    queries = plantQueries(createClient({ baseUrl: app.url, token: TOKEN }));
    queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    queryClient.mount();
  });

  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
    queryClient.clear();
    queryClient.unmount();
  });

  /** The first page as a fresh read lists it. */
  const fresh = async (query: PlantQuery) => {
    const page = await writer().listPlants({ ...query, count: true });
    return { names: names(page.plants), total: page.total };
  };

  it('when keys are made, then ids are decimal strings, the data keeps bigint ids, and the plant keeps its ETag', async () => {
    const id = 9007199254740993n + BigInt(Math.floor(Math.random() * 1e6));
    await writer().createPlant({ id, name: 'Keyed fern' });

    const plant = await queryClient.fetchQuery(queries.plant(id));

    expect(queries.keys.plant(id)).toEqual(['plant-store', 'plant', id.toString()]);
    expect(queries.keys.list({ after: 5n, q: 'fern', tag: undefined })).toEqual(['plant-store', 'list', { after: '5', q: 'fern' }]);
    expect({ id: plant.id, etag: queryClient.getQueryData<{ etag?: string }>(queries.keys.plant(id))?.etag }).toEqual({ id, etag: expect.stringMatching(/^"\d+"$/) });
  });

  it('when followed, then a cached list and an infinite list take each create, move, leave and delete in place, totals included', async () => {
    const tag = `tq-${randomBytes(4).toString('hex')}`;
    const query = { q: 'fern', tag, sort: 'name' as const, count: true };
    const [alpine, bird] = [newPlantId(), newPlantId()];
    await writer().createPlant({ id: alpine, name: 'Alpine fern', tag });
    const list = new QueryObserver(queryClient, queries.list(query));
    const infinite = new InfiniteQueryObserver(queryClient, queries.infiniteList({ ...query, limit: 1 }));
    stops.push(list.subscribe(() => undefined), infinite.subscribe(() => undefined));
    stops.push(queries.follow(queryClient, { tag }));
    const cached = () => queryClient.getQueryData<Page>(queries.keys.list(query));
    const pages = () => queryClient.getQueryData<InfiniteData<Page>>(queries.keys.infiniteList({ ...query, limit: 1 }));
    await until(cached, (page) => page !== undefined);
    await until(pages, (data) => data !== undefined);
    const converged = async () => {
      const expected = await fresh(query);
      const page = await until(cached, (current) => JSON.stringify({ names: names(current?.plants), total: current?.total }) === JSON.stringify(expected));
      return { names: names(page?.plants), total: page?.total };
    };

    await writer().createPlant({ id: bird, name: 'Bird fern', tag });
    const entered = await converged();
    await writer().updatePlant(alpine, { name: 'Zebra fern' });
    const moved = await converged();
    await writer().updatePlant(bird, { name: 'Bird of paradise' });
    const left = await converged();
    await writer().deletePlant(alpine);
    const deleted = await converged();
    await writer().createPlant({ id: newPlantId(), name: 'Cinnamon fern', tag });
    await converged();
    await infinite.fetchNextPage();
    const infinitePages = await until(pages, (data) => data?.pages[0]?.total === 1);

    expect({ entered, moved, left, deleted }).toEqual({
      entered: { names: ['Alpine fern', 'Bird fern'], total: 2 },
      moved: { names: ['Bird fern', 'Zebra fern'], total: 2 },
      left: { names: ['Zebra fern'], total: 1 },
      deleted: { names: [], total: 0 },
    });
    expect(infinitePages?.pages.flatMap((page) => names(page.plants))).toEqual(['Cinnamon fern']);
  });

  it('when more pages follow, then a change past the page waits, one inside lands in place, and one to its last plant reads the page again', async () => {
    const tag = `tq-window-${randomBytes(4).toString('hex')}`;
    // Without a count: an edit past the page would otherwise read it again, the count being unknown there.
    const query = { tag, sort: 'name' as const, limit: 2 };
    const ids = [newPlantId(), newPlantId(), newPlantId()];
    for (const [index, id] of ids.entries()) await writer().createPlant({ id, name: `Plant ${index}`, tag });
    // Once its feed is open, follow reads the lists again; the writes below come after that read, so what they do
    // to the cached page is what the feed does to it.
    const real = writer();
    let open = false;
    const watched: PlantStoreClient = {
      ...real,
      changes: (feedQuery) =>
        (async function* () {
          for await (const change of real.changes(feedQuery)) {
            open ||= change.type === 'open';
            yield change;
          }
        })(),
    };
    const followed = plantQueries(watched);
    stops.push(new QueryObserver(queryClient, followed.list(query)).subscribe(() => undefined), followed.follow(queryClient, { tag }));
    const cached = () => queryClient.getQueryData<Page>(queries.keys.list(query));
    const shown = async (expected: string[]) => names((await until(cached, (page) => names(page?.plants).join() === expected.join()))?.plants);
    await until(() => open && queryClient.isFetching() === 0, Boolean);
    await shown(['Plant 0', 'Plant 1']);

    await writer().updatePlant(ids[2] as bigint, { name: 'Plant 9' });
    await writer().createPlant({ id: newPlantId(), name: 'Plant 00', tag });
    const inside = await shown(['Plant 0', 'Plant 00', 'Plant 1']);
    await writer().updatePlant(ids[1] as bigint, { name: 'Plant 5' });
    const reread = await shown(await fresh(query).then((page) => page.names));

    expect({ inside, reread }).toEqual({ inside: ['Plant 0', 'Plant 00', 'Plant 1'], reread: ['Plant 0', 'Plant 00'] });
  });

  it('when an edit is made against an ETag someone else has since replaced, then the list shows it at once, rolls back on the 412 and reads the plant again', async () => {
    const tag = `tq-edit-${randomBytes(4).toString('hex')}`;
    const id = newPlantId();
    await writer().createPlant({ id, name: 'Mine', tag });
    const list = new QueryObserver(queryClient, queries.list({ tag }));
    stops.push(list.subscribe(() => undefined));
    const plant = new QueryObserver(queryClient, queries.plant(id));
    stops.push(plant.subscribe(() => undefined));
    await until(() => queryClient.getQueryData<Page>(queries.keys.list({ tag })), (page) => page !== undefined);
    await until(() => queryClient.getQueryData<StoredPlant>(queries.keys.plant(id)), (read) => read !== undefined);
    await writer().updatePlant(id, { name: 'Theirs' });
    const shown: string[] = [];
    stops.push(queryClient.getQueryCache().subscribe(() => shown.push(names(queryClient.getQueryData<Page>(queries.keys.list({ tag }))?.plants).join())));

    const error = await new MutationObserver(queryClient, queries.updateMutation(queryClient)).mutate({ id, patch: { name: 'Optimistic' } }).catch((caught: unknown) => caught);
    const reread = await until(() => queryClient.getQueryData<StoredPlant>(queries.keys.plant(id)), (plant) => plant?.name === 'Theirs');

    expect({ status: (error as PlantStoreError).status, code: (error as PlantStoreError).code }).toEqual({ status: 412, code: 41201 });
    expect(shown).toContain('Optimistic');
    expect(reread?.name).toBe('Theirs');
    expect(await until(() => names(queryClient.getQueryData<Page>(queries.keys.list({ tag }))?.plants), (current) => current[0] === 'Theirs')).toEqual(['Theirs']);
  });

  it('when a plant is created, edited and deleted through the mutations, then the cached list follows each, and the plant\'s cache goes with the delete', async () => {
    const tag = `tq-mut-${randomBytes(4).toString('hex')}`;
    const id = newPlantId();
    const list = new QueryObserver(queryClient, queries.list({ tag, count: true }));
    stops.push(list.subscribe(() => undefined));
    const cached = () => queryClient.getQueryData<Page>(queries.keys.list({ tag, count: true }));
    await until(cached, (page) => page !== undefined);

    const created = await new MutationObserver(queryClient, queries.createMutation(queryClient)).mutate({ id, name: 'Made', tag });
    const afterCreate = await until(cached, (page) => page?.total === 1 && page.plants.length === 1);
    await queryClient.fetchQuery(queries.plant(id));
    const saved = await new MutationObserver(queryClient, queries.updateMutation(queryClient)).mutate({ id, patch: { name: 'Edited' } });
    const afterEdit = await until(cached, (page) => page?.plants[0]?.name === 'Edited');
    await new MutationObserver(queryClient, queries.deleteMutation(queryClient)).mutate({ id });
    const afterDelete = await until(cached, (page) => page?.total === 0);

    expect(created).toEqual({ id, name: 'Made', tag });
    expect({ name: saved.name, cached: queryClient.getQueryData(queries.keys.plant(id)) }).toEqual({ name: 'Edited', cached: undefined });
    expect([names(afterCreate?.plants), names(afterEdit?.plants), names(afterDelete?.plants)]).toEqual([['Made'], ['Edited'], []]);
  });
});
