import supertest from 'supertest';
import { loadServiceConfig, startService } from '../../src/service';
import { captureLogs } from '../helpers/common';
import { appForAll, identityProviderForAll, sleep } from '../helpers/fixtures';
import { aKey, answer, send } from '../helpers/keyed-requests';
import { storedFeed } from '../helpers/plant-writes';
import { aNewPlant, uniqueId } from '../helpers/plants';
import { lockPlants } from '../helpers/store-lock';
import { bearer, OTHER_TOKEN, TOKEN } from '../helpers/test-app';

const app = appForAll();

const codeOf = (response: { text: string }) => (JSON.parse(response.text) as { error: number }).error;

describe('Idempotency-Key', () => {
  it('when a create is sent again with its key, then the same answer byte for byte with Idempotent-Replayed: true, and nothing is written', async () => {
    const plant = aNewPlant();
    const key = aKey();

    const first = await send(app, 'post', '/plants', plant, key);
    const again = await send(app, 'post', '/plants', plant, key);

    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(answer(again)).toEqual(answer(first));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(storedFeed(app, [plant.id as number])).toHaveLength(1);
  });

  it('when PUT, PATCH and DELETE are sent again, then each replays its answer: 201 with Location, the edited plant, 204 (not a 404)', async () => {
    const id = uniqueId();
    const [putKey, patchKey, deleteKey] = [aKey(), aKey(), aKey()];
    const put = await send(app, 'put', `/plants/${id}`, { name: 'Fern' }, putKey);
    const patch = await send(app, 'patch', `/plants/${id}`, { name: 'Fern 2' }, patchKey);
    const del = await send(app, 'delete', `/plants/${id}`, undefined, deleteKey);

    const replays = [await send(app, 'put', `/plants/${id}`, { name: 'Fern' }, putKey), await send(app, 'patch', `/plants/${id}`, { name: 'Fern 2' }, patchKey), await send(app, 'delete', `/plants/${id}`, undefined, deleteKey)];

    expect([put.status, patch.status, del.status]).toEqual([201, 200, 204]);
    expect(replays.map(answer)).toEqual([put, patch, del].map(answer));
    expect(replays.map((response) => response.headers['idempotent-replayed'])).toEqual(['true', 'true', 'true']);
    expect(storedFeed(app, [id]).map((event) => event.kind)).toEqual(['created', 'updated', 'deleted']);
  });

  it('when a batch is sent again with its key, then its results are replayed and nothing is written', async () => {
    const [a, b] = [uniqueId(), uniqueId()];
    const body = { operations: [{ op: 'create', plant: { id: a, name: 'Aloe' } }, { op: 'put', id: b, plant: { name: 'Basil' } }, { op: 'update', id: a, patch: { name: 'Aloe vera' } }] };
    const key = aKey();

    const first = await send(app, 'post', '/plants/batch', body, key);
    const again = await send(app, 'post', '/plants/batch', body, key);

    expect(first.status).toBe(200);
    expect({ ...answer(again), replayed: again.headers['idempotent-replayed'] }).toEqual({ ...answer(first), replayed: 'true' });
    expect(storedFeed(app, [a, b])).toHaveLength(3);
  });

  it('when the key is reused for another request, then 422 (42202) naming the key, and nothing is written', async () => {
    const key = aKey();
    const plant = aNewPlant();
    await send(app, 'post', '/plants', plant, key);

    const other = aNewPlant();
    const response = await send(app, 'post', '/plants', other, key);

    expect({ status: response.status, code: codeOf(response) }).toEqual({ status: 422, code: 42202 });
    expect(response.text).toContain('Idempotency-Key');
    expect(storedFeed(app, [other.id as number])).toEqual([]);
  });

  it('when the key is reused for a request whose body breaks a rule, then still the 422 (42202), not the 400', async () => {
    const key = aKey();
    await send(app, 'post', '/plants', aNewPlant(), key);

    const response = await send(app, 'post', '/plants', { id: uniqueId(), name: '' }, key);

    expect({ status: response.status, code: codeOf(response) }).toEqual({ status: 422, code: 42202 });
  });

  it.each([['has a space'], ['x'.repeat(256)], ['é']])('when the key is %j, then 400 (40052) naming the header', async (key) => {
    const response = await send(app, 'post', '/plants', aNewPlant(), key);

    expect({ status: response.status, code: codeOf(response) }).toEqual({ status: 400, code: 40052 });
    expect(response.text).toContain('Idempotency-Key');
  });

  it('when a request with the key is in flight, then the same request again answers 409 (40902) with Retry-After, and the first completes', async () => {
    const plant = aNewPlant();
    const key = aKey();
    const { release } = await lockPlants(app, 'writes');
    const first = send(app, 'post', '/plants', plant, key).then((response) => response);
    await sleep(200);

    const second = await send(app, 'post', '/plants', plant, key);
    await release();
    const done = await first;

    expect({ status: second.status, code: codeOf(second), retry: second.headers['retry-after'] }).toEqual({ status: 409, code: 40902, retry: '1' });
    expect(done.status).toBe(200);
    expect(storedFeed(app, [plant.id as number])).toHaveLength(1);
    const third = await send(app, 'post', '/plants', plant, key);
    expect({ ...answer(third), replayed: third.headers['idempotent-replayed'] }).toEqual({ ...answer(done), replayed: 'true' });
  });

  it('when a request fails (412, 400), then nothing is stored and the fixed retry with the same key is processed', async () => {
    const id = uniqueId();
    const created = await send(app, 'put', `/plants/${id}`, { name: 'Ivy' });
    const key = aKey();

    const stale = await send(app, 'put', `/plants/${id}`, { name: 'Ivy 2' }, key, { 'If-Match': '"1"' });
    const fixed = await send(app, 'put', `/plants/${id}`, { name: 'Ivy 2' }, key, { 'If-Match': created.headers.etag as string });
    const invalid = await send(app, 'patch', `/plants/${id}`, { name: '' }, key);
    const otherKey = aKey();
    const badBody = await send(app, 'patch', `/plants/${id}`, { name: '' }, otherKey);
    const goodBody = await send(app, 'patch', `/plants/${id}`, { name: 'Ivy 3' }, otherKey);

    expect([stale.status, fixed.status, fixed.headers['idempotent-replayed']]).toEqual([412, 200, undefined]);
    expect(invalid.status).toBe(422);
    expect([badBody.status, goodBody.status, JSON.parse(goodBody.text).name]).toEqual([400, 200, 'Ivy 3']);
  });

  it("when another caller sends the same key, then its request is its own: processed, not replayed nor refused", async () => {
    const key = aKey();
    await send(app, 'post', '/plants', aNewPlant(), key);

    const plant = aNewPlant();
    const response = await send(app, 'post', '/plants', plant, key, bearer(OTHER_TOKEN));

    expect({ status: response.status, replayed: response.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
    expect(storedFeed(app, [plant.id as number])).toHaveLength(1);
  });

  it('when the service is started again on the same store, then the stored answer is replayed by the new process', async () => {
    const plant = aNewPlant();
    const key = aKey();
    const first = await send(app, 'post', '/plants', plant, key);
    const config = loadServiceConfig({ AUTH_TOKENS: TOKEN, RATE_LIMIT_PER_MINUTE: '0', LOAD_SHED_LAG_MS: '0', METRICS_PORT: '0', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: app.store === 'postgres' ? app.dbPath : `file:${app.dbPath}` });
    const service = await startService(config, captureLogs(config).logger);
    try {
      const again = await send(supertest.agent(service.url), 'post', '/plants', plant, key);

      expect({ ...answer(again), replayed: again.headers['idempotent-replayed'] }).toEqual({ ...answer(first), replayed: 'true' });
      expect(storedFeed(app, [plant.id as number])).toHaveLength(1);
    } finally {
      await service.drain();
    }
  });
});

describe('Idempotency-Key with JWT access tokens', () => {
  const idp = identityProviderForAll();
  const jwtApp = appForAll(() => idp.env());

  it('when a token of the same subject sends the key again, then it replays; another subject with the key is its own request', async () => {
    const key = aKey();
    const plant = aNewPlant();
    const first = await send(jwtApp, 'post', '/plants', plant, key, { Authorization: `Bearer ${await idp.mint({ sub: 'ana' })}` });
    const again = await send(jwtApp, 'post', '/plants', plant, key, { Authorization: `Bearer ${await idp.mint({ sub: 'ana' })}` });
    const other = aNewPlant();
    const bob = await send(jwtApp, 'post', '/plants', other, key, { Authorization: `Bearer ${await idp.mint({ sub: 'bob' })}` });

    expect({ ...answer(again), replayed: again.headers['idempotent-replayed'] }).toEqual({ ...answer(first), replayed: 'true' });
    expect({ status: bob.status, replayed: bob.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
    expect(storedFeed(jwtApp, [other.id as number])).toHaveLength(1);
  });
});
