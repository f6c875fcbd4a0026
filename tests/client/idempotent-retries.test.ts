/**
 * The client's own retries of a write whose answer was lost after the commit: a TCP proxy of ours lets the
 * request through and cuts the connection as the answer comes back, for the first try only. The retry carries the
 * same Idempotency-Key and gets the stored answer, so the call resolves as if nothing was lost, and the store and
 * the change feed hold the write once.
 */
import { randomBytes } from 'node:crypto';
import { createClient, newPlantId, type ClientOptions, type PlantStoreClient } from '../../clients/typescript/src/index';
import { plantQueries } from '../../clients/typescript/src/tanstack';
import { CLIENT_STORES, core } from '../helpers/client-stores';
import { appForAll } from '../helpers/fixtures';
import { withTimes } from '../helpers/plants';
import { openStream, type SseEvent } from '../helpers/sse';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { bearer, storedPlant, TOKEN } from '../helpers/test-app';

/** One try as the client made it: the key it sent, and the answer's status and Idempotent-Replayed, or the network error. */
type Try = { key: string | undefined; status?: number; replayed?: string | null; error?: string };

/** The key the client makes: 128 random bits as four numbers. */
const GENERATED = /^\d+-\d+-\d+-\d+$/;

/** The plant id of a feed event, exactly (the data is JSON with ids past 2^53). */
const idOf = (event: SseEvent): bigint | undefined => {
  const id = /"id":(-?\d+)/.exec(event.data ?? '')?.[1];
  return id === undefined ? undefined : BigInt(id);
};

/** The first try lost after the commit, the second replayed with the same key. */
const lostThenReplayed = (tries: Try[], status: number) =>
  expect(tries).toEqual([
    { key: expect.stringMatching(GENERATED), error: 'TypeError' },
    { key: tries[0]?.key, status, replayed: 'true' },
  ]);

describe.each(CLIENT_STORES)('the TypeScript client retrying a write whose answer was lost after the commit, on %s', (store) => {
  const app = appForAll({}, { store });
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(app.url).port) });
  });

  afterAll(async () => {
    await proxy.close();
  });

  const direct = (): PlantStoreClient => createClient({ baseUrl: app.url, token: TOKEN });

  /** A client through the proxy, and every try it made. */
  function throughProxy(retry: ClientOptions['retry'] = { attempts: 3, maxDelayMs: 2000 }) {
    const tries: Try[] = [];
    const client = createClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      token: TOKEN,
      retry,
      fetch: async (input, init) => {
        const key = (init?.headers as Record<string, string>)['Idempotency-Key'];
        try {
          const response = await fetch(input, init);
          tries.push({ key, status: response.status, replayed: response.headers.get('Idempotent-Replayed') });
          return response;
        } catch (error) {
          tries.push({ key, error: (error as Error).name });
          throw error;
        }
      },
    });
    return { client, tries };
  }

  /**
   * Runs `write` with the first answer through the proxy lost; resolves with its result and the feed's events
   * (type and plant id) for `ids` from before it until a marker created after it, straight on the service.
   */
  async function withFirstAnswerLost<T>(ids: bigint[], write: () => Promise<T>): Promise<{ result: T; events: [string | undefined, bigint | undefined][] }> {
    const { position } = await direct().listPlants({ limit: 1 });
    const stream = await openStream(app.url, `/plants/events?after=${position}`, bearer());
    proxy.loseAnswers(1);
    const result = await write();
    const marker = newPlantId();
    await direct().createPlant({ id: marker, name: 'Marker' });
    await stream.waitFor(() => stream.named().some((event) => idOf(event) === marker));
    stream.close();
    const events = stream.named().filter((event) => ids.includes(idOf(event) as bigint));
    return { result, events: events.map((event) => [event.event, idOf(event)]) };
  }

  it('when a create\'s answer is lost, then the retry with its key gets the stored answer and the feed holds one create', async () => {
    const { client, tries } = throughProxy();
    const id = newPlantId();

    const { result, events } = await withFirstAnswerLost([id], () => client.createPlant({ id, name: 'Fern', tag: 'shade' }));

    expect(result).toEqual({ id, name: 'Fern', tag: 'shade' });
    expect(result.etag).toBe((await direct().getPlant(id)).etag);
    lostThenReplayed(tries, 200);
    expect(events).toEqual([['plant.created', id]]);
    expect(storedPlant(app, id)).toEqual({ id, name: 'Fern', tag: 'shade' });
  });

  it('when a PATCH with If-Match loses its answer, then the retry resolves with the edited plant (not a 412 against itself) and the feed holds one update', async () => {
    const { client, tries } = throughProxy();
    const id = newPlantId();
    const before = await direct().createPlant({ id, name: 'Ivy' });

    const { result, events } = await withFirstAnswerLost([id], () => client.updatePlant(id, { tag: 'climbing' }, { ifMatch: before.etag as string }));

    expect(result).toEqual(withTimes({ id, name: 'Ivy', tag: 'climbing' }));
    expect(result.etag).toBe((await direct().getPlant(id)).etag);
    lostThenReplayed(tries, 200);
    expect(events).toEqual([['plant.updated', id]]);
  });

  it('when a create-only PUT loses its answer, then the retry resolves as created (not a 412) and the feed holds one create', async () => {
    const { client, tries } = throughProxy();
    const id = newPlantId();

    const { result, events } = await withFirstAnswerLost([id], () => client.putPlant(id, { name: 'Palm' }, { ifNoneMatch: '*' }));

    expect(result).toEqual({ plant: { id, name: 'Palm' }, created: true });
    expect(result.plant.etag).toBe((await direct().getPlant(id)).etag);
    lostThenReplayed(tries, 201);
    expect(events).toEqual([['plant.created', id]]);
  });

  it('when a DELETE loses its answer, then the retry resolves (not a 404) and the feed holds one delete', async () => {
    const { client, tries } = throughProxy();
    const id = newPlantId();
    await direct().createPlant({ id, name: 'Gone' });

    const { result, events } = await withFirstAnswerLost([id], () => client.deletePlant(id));

    expect(result).toBeUndefined();
    lostThenReplayed(tries, 204);
    expect(events).toEqual([['plant.deleted', id]]);
    expect(storedPlant(app, id)).toBeUndefined();
  });

  it('when a batch loses its answer, then the retry resolves with its results and the feed holds each operation once, in order', async () => {
    const { client, tries } = throughProxy();
    const [made, edited, removed] = [newPlantId(), newPlantId(), newPlantId()];
    await direct().createPlant({ id: edited, name: 'Edited' });
    await direct().createPlant({ id: removed, name: 'Removed' });

    const { result, events } = await withFirstAnswerLost([made, edited, removed], () =>
      client.batch([
        { op: 'create', plant: { id: made, name: 'Made' } },
        { op: 'update', id: edited, patch: { tag: 'batched' } },
        { op: 'delete', id: removed },
      ]),
    );

    expect(result.map((each) => each.status)).toEqual([200, 200, 204]);
    expect(result[1].plant).toEqual(withTimes({ id: edited, name: 'Edited', tag: 'batched' }));
    lostThenReplayed(tries, 200);
    expect(events).toEqual([
      ['plant.created', made],
      ['plant.updated', edited],
      ['plant.deleted', removed],
    ]);
    expect([storedPlant(app, made), storedPlant(app, edited), storedPlant(app, removed)]).toEqual([
      { id: made, name: 'Made', tag: null },
      { id: edited, name: 'Edited', tag: 'batched' },
      undefined,
    ]);
  });

  it('when the caller passes its own key, then every try sends it as given, and the service kept the answer under it', async () => {
    const { client, tries } = throughProxy();
    const id = newPlantId();
    await direct().createPlant({ id, name: 'Keyed' });
    const key = `caller-${store}-${randomBytes(8).toString('hex')}`;

    const { result } = await withFirstAnswerLost([id], () => client.updatePlant(id, { name: 'Renamed' }, { idempotencyKey: key }));
    const again = await app.request
      .patch(`/plants/${id}`)
      .set({ ...bearer(), 'Content-Type': 'application/merge-patch+json', 'Idempotency-Key': key })
      .send('{"name":"Renamed"}');

    expect(result).toEqual(withTimes({ id, name: 'Renamed' }));
    expect(tries).toEqual([
      { key, error: 'TypeError' },
      { key, status: 200, replayed: 'true' },
    ]);
    expect({ status: again.status, replayed: again.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: 'true' });
  });

  it('when TanStack retries a delete mutation the client gave up on, then its try sends the same key and is replayed; a new mutate() is a new write', async () => {
    // One try per call: the lost answer is the client's failure, and TanStack's `retry` sends it again.
    const { client, tries } = throughProxy({ attempts: 1 });
    const queries = plantQueries(client);
    const queryClient = new core.QueryClient();
    const id = newPlantId();
    await direct().createPlant({ id, name: 'Twice' });
    const variables = { id };
    const mutate = () => new core.MutationObserver(queryClient, { ...queries.deleteMutation(queryClient), retry: 1, retryDelay: 0 }).mutate(variables);

    const { events } = await withFirstAnswerLost([id], mutate);
    const second = await mutate().then(
      () => 'deleted',
      (error: { status?: number }) => error.status,
    );

    lostThenReplayed(tries.slice(0, 2), 204);
    // The second mutate() has a key of its own, on both its tries (a 404 stores nothing).
    const newKey = tries[2]?.key;
    expect(tries.slice(2)).toEqual([
      { key: expect.stringMatching(GENERATED), status: 404, replayed: null },
      { key: newKey, status: 404, replayed: null },
    ]);
    expect(newKey).not.toBe(tries[0]?.key);
    expect({ events, second }).toEqual({ events: [['plant.deleted', id]], second: 404 });
  });
});
