import { withTimes } from '../helpers/plants';
import { createClient, newPlantId, PlantStoreError, type PlantStoreClient } from '../../clients/typescript/src/index';
import { appForAll } from '../helpers/fixtures';
import { CLIENT_STORES } from '../helpers/client-stores';
import { storedPlant, TOKEN } from '../helpers/test-app';

/** What the call rejects with; undefined when it resolves. */
const failure = (call: Promise<unknown>) => call.then(() => undefined, (error: unknown) => error as PlantStoreError);

type Sent = { method: string; url: string; headers: Record<string, string>; body?: string };

/** fetch, keeping what the client sent. */
function recordingFetch(): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: input as string, headers: { ...(init?.headers as Record<string, string>) }, body: init?.body as string | undefined });
      return fetch(input, init);
    },
  };
}

/** An id past 2^53, where a JavaScript number would round it. */
const bigId = () => 2n ** 53n + 1n + BigInt(Math.floor(Math.random() * 1e9)) * 2n;
const ETAG = expect.stringMatching(/^"\d+"$/);

// Both stores: each answers PUT and batches byte for byte alike, and each must apply a failed batch not at all.
describe.each(CLIENT_STORES)('the TypeScript client writing with putPlant and batch against the service on %s', (store) => {
  const app = appForAll({}, { store });
  const client = (): PlantStoreClient => createClient({ baseUrl: app.url, token: TOKEN });
  /** The feed's position: it moves with every change, so a batch that changed nothing leaves it where it was. */
  const position = async () => (await client().listPlants({ limit: 1 })).position;

  it('when putPlant is sent for an id that holds no plant, then it creates it (201) with the exact id and its ETag, sending no precondition and a key of its own', async () => {
    const recorded = recordingFetch();
    const id = bigId();

    const put = await createClient({ baseUrl: app.url, token: TOKEN, fetch: recorded.fetch }).putPlant(id, { name: 'Fern', tag: 'shade' });

    expect(put).toEqual({ plant: { id, name: 'Fern', tag: 'shade' }, created: true });
    expect(put.plant.etag).toBe((await client().getPlant(id)).etag);
    expect(recorded.sent).toEqual([
      { method: 'PUT', url: `${app.url}/plants/${id}`, headers: { Accept: 'application/json', Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', 'Idempotency-Key': expect.stringMatching(/^\d+-\d+-\d+-\d+$/) }, body: '{"name":"Fern","tag":"shade"}' },
    ]);
    expect(storedPlant(app, id)).toEqual({ id, name: 'Fern', tag: 'shade' });
  });

  it('when putPlant is sent for an existing plant, then it replaces name and tag (200, a tag left out is removed) with a new ETag', async () => {
    const id = bigId();
    const first = await client().putPlant(id, { name: 'Ivy', tag: 'climbing' });

    const put = await client().putPlant(id, { name: 'Ivy, replaced' }, { ifMatch: first.plant.etag });

    expect(put).toEqual({ plant: { id, name: 'Ivy, replaced' }, created: false });
    expect(Object.keys(put.plant)).toEqual(['id', 'name']);
    expect(put.plant.etag).toEqual(ETAG);
    expect(put.plant.etag).not.toBe(first.plant.etag);
    expect(await client().getPlant(id)).toEqual(withTimes({ id, name: 'Ivy, replaced' }));
  });

  it('when putPlant carries a stale ifMatch, or ifNoneMatch * for an existing plant, then it throws 412 41201 and the plant stays', async () => {
    const recorded = recordingFetch();
    const id = bigId();
    const stale = await client().putPlant(id, { name: 'Shared' });
    await client().putPlant(id, { name: 'Changed by another' });
    const writer = createClient({ baseUrl: app.url, token: TOKEN, fetch: recorded.fetch });

    const errors = [await failure(writer.putPlant(id, { name: 'Mine' }, { ifMatch: stale.plant.etag })), await failure(writer.putPlant(id, { name: 'Mine' }, { ifNoneMatch: '*' }))];

    expect(errors.map((error) => error instanceof PlantStoreError && { status: error.status, code: error.code })).toEqual([
      { status: 412, code: 41201 },
      { status: 412, code: 41201 },
    ]);
    expect(recorded.sent.map((sent) => [sent.headers['If-Match'], sent.headers['If-None-Match']])).toEqual([
      [stale.plant.etag, undefined],
      [undefined, '*'],
    ]);
    expect(storedPlant(app, id)).toEqual({ id, name: 'Changed by another', tag: null });
  });

  it('when putPlant carries ifNoneMatch * for a free id, then it creates the plant', async () => {
    const id = bigId();

    expect(await client().putPlant(id, { name: 'New only' }, { ifNoneMatch: '*' })).toEqual({ plant: { id, name: 'New only' }, created: true });
  });

  it('when a batch creates, updates, puts and deletes, then every operation applies in order and each result comes in its place with exact ids', async () => {
    const recorded = recordingFetch();
    const [a, b, c] = [bigId(), bigId(), bigId()];
    const doomed = await client().createPlant({ id: c, name: 'Doomed' });

    const results = await createClient({ baseUrl: app.url, token: TOKEN, fetch: recorded.fetch }).batch([
      { op: 'create', plant: { id: a, name: 'Fern' } },
      { op: 'update', id: a, patch: { tag: 'shade' } },
      { op: 'put', id: b, plant: { name: 'Ivy', tag: 'climbing' }, ifNoneMatch: '*' },
      { op: 'put', id: b, plant: { name: 'Ivy' } },
      { op: 'delete', id: c, ifMatch: doomed.etag as string },
    ]);

    expect(recorded.sent.map((sent) => sent.body)).toEqual([
      `{"operations":[{"op":"create","plant":{"id":${a},"name":"Fern"}},{"op":"update","id":${a},"patch":{"tag":"shade"}},` +
        `{"op":"put","id":${b},"plant":{"name":"Ivy","tag":"climbing"},"ifNoneMatch":"*"},{"op":"put","id":${b},"plant":{"name":"Ivy"}},` +
        `{"op":"delete","id":${c},"ifMatch":${JSON.stringify(doomed.etag)}}]}`,
    ]);
    expect(results).toEqual([
      { status: 200, etag: ETAG, plant: { id: a, name: 'Fern' } },
      { status: 200, etag: ETAG, plant: withTimes({ id: a, name: 'Fern', tag: 'shade' }) },
      { status: 201, etag: ETAG, plant: { id: b, name: 'Ivy', tag: 'climbing' } },
      { status: 200, etag: ETAG, plant: { id: b, name: 'Ivy' } },
      { status: 204 },
    ]);
    const [created, updated, , replaced] = results;
    // In order: each operation's version comes after the one before it.
    expect(BigInt(JSON.parse(updated.etag) as string)).toBeGreaterThan(BigInt(JSON.parse(created.etag) as string));
    expect(updated.plant?.etag).toBe(updated.etag);
    expect(typeof updated.plant?.id).toBe('bigint');
    expect({ a: (await client().getPlant(a)).etag, b: (await client().getPlant(b)).etag }).toEqual({ a: updated.etag, b: replaced.etag });
    expect([storedPlant(app, a), storedPlant(app, b), storedPlant(app, c)]).toEqual([{ id: a, name: 'Fern', tag: 'shade' }, { id: b, name: 'Ivy', tag: null }, undefined]);
  });

  it('when an operation of a batch fails, then it throws that operation\'s error with its index and nothing of the batch is applied', async () => {
    const [a, missing] = [bigId(), bigId()];
    const kept = await client().createPlant({ id: bigId(), name: 'Kept' });
    const before = await position();

    const error = await failure(
      client().batch([
        { op: 'create', plant: { id: a, name: 'Never stored' } },
        { op: 'update', id: kept.id, patch: { name: 'Never renamed' } },
        { op: 'update', id: missing, patch: { name: 'Nobody' } },
      ]),
    );

    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ status: error?.status, code: error?.code, operation: error?.operation }).toEqual({ status: 404, code: 40402, operation: 2 });
    expect(error?.message).toMatch(/^operations\[2\]: /);
    expect([storedPlant(app, a), storedPlant(app, kept.id)]).toEqual([undefined, { id: kept.id, name: 'Kept', tag: null }]);
    expect(await position()).toBe(before);
  });

  it('when a batch holds a stale ifMatch or a field that breaks its rule, then the error names the operation (412) or its field (400)', async () => {
    const id = bigId();
    const stale = await client().createPlant({ id, name: 'Versioned' });
    await client().updatePlant(id, { tag: 'moved on' });
    const before = await position();

    const stalled = await failure(client().batch([{ op: 'put', id, plant: { name: 'Mine' }, ifMatch: stale.etag as string }]));
    const invalid = await failure(client().batch([{ op: 'delete', id }, { op: 'create', plant: { id: bigId(), name: ' ' } }]));

    expect({ status: stalled?.status, code: stalled?.code, operation: stalled?.operation }).toEqual({ status: 412, code: 41201, operation: 0 });
    expect({ status: invalid?.status, code: invalid?.code, operation: invalid?.operation, fields: invalid?.fields?.map((field) => [field.field, field.code]) }).toEqual({
      status: 400,
      code: 40006,
      operation: 1,
      fields: [['operations[1].plant.name', 'blank']],
    });
    expect(storedPlant(app, id)).toEqual({ id, name: 'Versioned', tag: 'moved on' });
    expect(await position()).toBe(before);
  });
});

describe('the TypeScript client sending a batch over a network that fails', () => {
  it('when the connection fails, then the batch is sent again with the same key (a try that went through is replayed, not applied again) and the last network error reaches the caller', async () => {
    const keys: (string | undefined)[] = [];
    const failing: typeof fetch = (_input, init) => {
      keys.push((init?.headers as Record<string, string>)['Idempotency-Key']);
      return Promise.reject(new TypeError('fetch failed'));
    };
    const writer = createClient({ baseUrl: 'http://127.0.0.1:9', token: TOKEN, fetch: failing, retry: { attempts: 3, maxDelayMs: 1 } });

    const error = await writer.batch([{ op: 'delete', id: newPlantId() }]).then(() => undefined, (caught: unknown) => caught as Error);
    const retried = await writer.putPlant(newPlantId(), { name: 'Put' }).then(() => undefined, (caught: unknown) => caught as Error);

    expect({ batch: error?.name, put: retried?.name }).toEqual({ batch: 'TypeError', put: 'TypeError' });
    // Three tries each, one key per call.
    expect(keys).toEqual([keys[0], keys[0], keys[0], keys[3], keys[3], keys[3]]);
    expect(new Set(keys).size).toBe(2);
  });
});
