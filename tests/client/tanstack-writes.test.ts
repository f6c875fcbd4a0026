import { randomBytes } from 'node:crypto';
import { createClient, newPlantId, PlantStoreError, type Page, type PlantStoreClient, type StoredPlant } from '../../clients/typescript/src/index';
import { plantQueries } from '../../clients/typescript/src/tanstack';
import { appForAll } from '../helpers/fixtures';
import { CLIENT_STORES, core, until, type Core } from '../helpers/client-stores';
import { storedPlant, TOKEN } from '../helpers/test-app';

const { MutationObserver, QueryClient, QueryObserver } = core;

const names = (plants: StoredPlant[] | undefined) => (plants ?? []).map((plant) => plant.name);

describe.each(CLIENT_STORES)('putMutation and batchMutation (@plant-store/client/tanstack) with a real QueryClient against the service on %s', (store) => {
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

  /** The queries over a client whose puts and batches wait for `release`: what the cache shows before is the mutation's guess alone. */
  function gated() {
    let release = () => undefined as void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = createClient({ baseUrl: app.url, token: TOKEN });
    const client: PlantStoreClient = {
      ...real,
      putPlant: async (...args) => gate.then(() => real.putPlant(...args)),
      batch: (async (...args: Parameters<PlantStoreClient['batch']>) => gate.then(() => real.batch(...args))) as PlantStoreClient['batch'],
    };
    return { queries: plantQueries(client), release };
  }

  /** A cached list of one tag, sorted by name, and every state it shows from now on. */
  async function watched(tag: string) {
    const query = { tag, sort: 'name' as const, count: true };
    stops.push(new QueryObserver(queryClient, queries.list(query)).subscribe(() => undefined));
    const cached = () => queryClient.getQueryData<Page>(queries.keys.list(query));
    await until(cached, (page) => page !== undefined);
    const shown: string[] = [];
    stops.push(queryClient.getQueryCache().subscribe(() => shown.push(names(cached()?.plants).join())));
    /** Waits until the list shows these names, in order. */
    const shows = async (expected: string[]) => names((await until(cached, (page) => names(page?.plants).join() === expected.join()))?.plants);
    return { cached, shown, shows };
  }

  it('when a plant is put over a cached one and another put under a free id, then the list shows each at once and then as stored', async () => {
    const tag = `tq-put-${randomBytes(4).toString('hex')}`;
    const [fern, ivy] = [newPlantId(), newPlantId()];
    await writer().createPlant({ id: fern, name: 'Fern', tag });
    const list = await watched(tag);

    const replaced = await new MutationObserver(queryClient, queries.putMutation(queryClient)).mutate({ id: fern, plant: { name: 'Alpine fern', tag } });
    const afterReplace = await list.shows(['Alpine fern']);
    const { queries: held, release } = gated();
    const pending = new MutationObserver(queryClient, held.putMutation(queryClient)).mutate({ id: ivy, plant: { name: 'Ivy', tag }, ifNoneMatch: '*' });
    const beforeAnswer = { shown: await list.shows(['Alpine fern', 'Ivy']), total: list.cached()?.total, stored: storedPlant(app, ivy) };
    release();
    const made = await pending;

    expect({ replaced: replaced.created, made: made.created }).toEqual({ replaced: false, made: true });
    expect(afterReplace).toEqual(['Alpine fern']);
    expect(beforeAnswer).toEqual({ shown: ['Alpine fern', 'Ivy'], total: 2, stored: undefined });
    expect(await list.shows(['Alpine fern', 'Ivy'])).toEqual(['Alpine fern', 'Ivy']);
    expect(storedPlant(app, ivy)).toEqual({ id: ivy, name: 'Ivy', tag });
  });

  it('when a batch creates, renames what it created and deletes, then the list shows all of it at once, in order, and then as stored', async () => {
    const tag = `tq-batch-${randomBytes(4).toString('hex')}`;
    const [old, made] = [newPlantId(), newPlantId()];
    await writer().createPlant({ id: old, name: 'Old', tag });
    const list = await watched(tag);

    const { queries: held, release } = gated();
    const pending = new MutationObserver(queryClient, held.batchMutation(queryClient)).mutate([
      { op: 'create', plant: { id: made, name: 'New', tag } },
      { op: 'update', id: made, patch: { name: 'New, renamed' } },
      { op: 'delete', id: old },
    ]);
    // Before the service answers: the create, then the rename of the plant it created, then the delete.
    const optimistic = { shown: await list.shows(['New, renamed']), stored: storedPlant(app, made) };
    release();
    const results = await pending;

    expect(optimistic).toEqual({ shown: ['New, renamed'], stored: undefined });
    expect(results.map((result) => result.status)).toEqual([200, 200, 204]);
    expect(await list.shows(['New, renamed'])).toEqual(['New, renamed']);
    expect([storedPlant(app, made), storedPlant(app, old)]).toEqual([{ id: made, name: 'New, renamed', tag }, undefined]);
  });

  it('when a batch fails on its last operation, then the list showed it at once, is put back as it was, and nothing is stored', async () => {
    const tag = `tq-batch-fail-${randomBytes(4).toString('hex')}`;
    const [kept, never] = [newPlantId(), newPlantId()];
    await writer().createPlant({ id: kept, name: 'Kept', tag });
    const list = await watched(tag);
    const before = list.cached();

    const error = await new MutationObserver(queryClient, queries.batchMutation(queryClient))
      .mutate([
        { op: 'create', plant: { id: never, name: 'Never', tag } },
        { op: 'delete', id: kept },
        { op: 'update', id: newPlantId(), patch: { name: 'Nobody' } },
      ])
      .then(() => undefined, (caught: unknown) => caught as PlantStoreError);

    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ status: error?.status, code: error?.code, operation: error?.operation }).toEqual({ status: 404, code: 40402, operation: 2 });
    expect(list.shown).toContain('Never');
    expect(list.cached()).toEqual(before);
    expect([storedPlant(app, kept), storedPlant(app, never)]).toEqual([{ id: kept, name: 'Kept', tag }, undefined]);
  });
});
