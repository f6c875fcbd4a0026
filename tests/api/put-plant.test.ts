import { aNewPlant, plantText, uniqueId } from '../helpers/plants';
import { bearer, postPlant, storedEvents, storedPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { putPlant, storedFeed } from '../helpers/plant-writes';

// Subscribed to all three types at a port nothing listens on: the outbox rows stay to be read.
const app = appForAll({ WEBHOOK_URLS: 'http://127.0.0.1:9/hooks', WEBHOOK_SECRET: `whsec_${Buffer.from('put-plant-test-webhook-secret-32b').toString('base64')}`, WEBHOOK_EVENTS: 'plant.created,plant.updated,plant.deleted' });

const put = (id: number | string, body: unknown, headers: Record<string, string> = {}) => putPlant(app, id, body, headers);
const get = (id: number | string) => app.request.get(`/plants/${id}`).set(bearer());
const answer = (response: { status: number; text: string; headers: Record<string, string> }) => ({
  status: response.status,
  text: response.text,
  etag: response.headers.etag,
  location: response.headers.location,
  cache: response.headers['cache-control'],
});
const kinds = (id: number | string) => storedFeed(app, [id]).map((event) => event.kind);

async function created(overrides: Record<string, unknown> = {}) {
  const plant = aNewPlant(overrides);
  const response = await postPlant(app, plant);
  expect(response.status).toBe(200);
  return { id: plant.id as number, etag: response.headers.etag as string };
}

describe('PUT /plants/{id}', () => {
  it('when the id holds no plant, then it creates it: 201 with the plant, its ETag and Location, a plant.created event and webhook', async () => {
    const id = uniqueId();

    const response = await put(id, { name: 'Fern', tag: 'shade', colour: 'ignored' });
    const read = await get(id);

    expect(answer(response)).toEqual({ status: 201, text: `{"id":${id},"name":"Fern","tag":"shade"}`, etag: expect.stringMatching(/^"\d+"$/), location: `/plants/${id}`, cache: 'no-store' });
    expect({ text: read.text, etag: read.headers.etag }).toEqual({ text: plantText(`{"id":${id},"name":"Fern","tag":"shade"}`), etag: response.headers.etag });
    expect(storedFeed(app, [id])).toEqual([{ pos: BigInt(JSON.parse(response.headers.etag as string) as string), kind: 'created', id: BigInt(id), name: 'Fern' }]);
    expect(storedEvents(app, id).map((row) => row.payload)).toEqual([`{"id":${id},"name":"Fern","tag":"shade"}`]);
  });

  it('when the id holds a plant, then it replaces name and tag (a tag left out is removed): 200, a new ETag, createdAt kept, a plant.updated event', async () => {
    const { id, etag } = await created({ name: 'Pothos', tag: 'hanging' });
    const before = JSON.parse((await get(id)).text) as { createdAt: string };

    const response = await put(id, { id, name: 'Golden pothos' });
    const read = JSON.parse((await get(id)).text) as Record<string, unknown>;

    expect(answer(response)).toEqual({ status: 200, text: `{"id":${id},"name":"Golden pothos"}`, etag: expect.stringMatching(/^"\d+"$/), location: undefined, cache: 'no-store' });
    expect(response.headers.etag).not.toBe(etag);
    expect(read).toEqual({ id, name: 'Golden pothos', createdAt: before.createdAt, updatedAt: expect.any(String) });
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'Golden pothos', tag: null });
    expect(kinds(id)).toEqual(['created', 'updated']);
    expect(storedEvents(app, id).map((row) => JSON.parse(row.payload) as { type?: string })[1]?.type).toBe('plant.updated');
  });

  it('when the plant sent equals the stored one, then it answers 200 with the same ETag and writes no event', async () => {
    const { id, etag } = await created({ name: 'Aloe', tag: 'sun' });

    const response = await put(id, { name: 'Aloe', tag: 'sun' });

    expect(answer(response)).toEqual({ status: 200, text: `{"id":${id},"name":"Aloe","tag":"sun"}`, etag, location: undefined, cache: 'no-store' });
    expect(kinds(id)).toEqual(['created']);
  });

  it('when If-Match names the current ETag, then it replaces; when it names an older one, then 412 41201 and nothing changes', async () => {
    const { id, etag } = await created({ name: 'Ivy' });
    const first = await put(id, { name: 'English ivy' }, { 'If-Match': etag });

    const stale = await put(id, { name: 'Stale ivy' }, { 'If-Match': etag });

    expect(first.status).toBe(200);
    expect({ status: stale.status, body: stale.body as unknown }).toEqual({ status: 412, body: { error: 41201, message: expect.stringContaining(`(its ETag is now ${first.headers.etag as string})`) } });
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'English ivy', tag: null });
    expect(kinds(id)).toEqual(['created', 'updated']);
  });

  it('when If-Match is sent (a tag or *) and the id holds no plant, then 412 41201 and nothing is created', async () => {
    const id = uniqueId();

    const tagged = await put(id, { name: 'Ghost' }, { 'If-Match': '"1"' });
    const any = await put(id, { name: 'Ghost' }, { 'If-Match': '*' });

    expect([tagged.status, tagged.body, any.status, (any.body as { error: number }).error]).toEqual([
      412,
      { error: 41201, message: `If-Match: no plant has id ${id}; nothing was written. Send the PUT without If-Match to create it.` },
      412,
      41201,
    ]);
    expect(storedPlant(app, id)).toBeUndefined();
    expect(kinds(id)).toEqual([]);
  });

  it('when If-Match: * meets a plant, then it replaces it', async () => {
    const { id } = await created({ name: 'Basil' });

    const response = await put(id, { name: 'Thai basil' }, { 'If-Match': '*' });

    expect([response.status, response.text]).toEqual([200, `{"id":${id},"name":"Thai basil"}`]);
  });

  it('when If-None-Match: * is sent, then it creates a new plant (201) and answers 412 for an id that holds one', async () => {
    const id = uniqueId();

    const first = await put(id, { name: 'Mint' }, { 'If-None-Match': '*' });
    const second = await put(id, { name: 'Other mint' }, { 'If-None-Match': '*' });

    expect(first.status).toBe(201);
    expect({ status: second.status, body: second.body as unknown }).toEqual({
      status: 412,
      body: { error: 41201, message: `If-None-Match: plant ${id} exists (its ETag is ${first.headers.etag as string}); nothing was changed. Use another id, or send If-Match to replace it.` },
    });
    expect(kinds(id)).toEqual(['created']);
  });

  it('when If-None-Match is a list of tags, then 400 40012 naming the header, before anything is written', async () => {
    const id = uniqueId();

    const response = await put(id, { name: 'Sage' }, { 'If-None-Match': '"3"' });

    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 400,
      body: {
        error: 40012,
        message: 'If-None-Match: must be * (create only) or left out on PUT; use If-Match to replace a known version',
        fields: [{ field: 'If-None-Match', code: 'unknown_value', message: 'must be * (create only) or left out on PUT; use If-Match to replace a known version' }],
      },
    });
    expect(storedPlant(app, id)).toBeUndefined();
  });

  it('when the body breaks the create rules or names another id, then 400 40006 with its fields and nothing is written', async () => {
    const id = uniqueId();

    const blank = await put(id, { name: ' ' });
    const other = await put(id, { id: id + 1, name: 'Moved' });

    expect([blank.status, (blank.body as { error: number }).error, (blank.body as { fields: { field: string }[] }).fields[0]?.field]).toEqual([400, 40006, 'name']);
    expect([other.status, other.body]).toEqual([
      400,
      { error: 40006, message: `id: must be the id in the path (${id}), or left out; an id cannot be changed`, fields: [{ field: 'id', code: 'mismatch', message: `must be the id in the path (${id}), or left out; an id cannot be changed` }] },
    ]);
    expect(storedPlant(app, id)).toBeUndefined();
  });

  it('when the id is an int64 edge past 2^53, then it is created and answered digit for digit', async () => {
    const id = '9007199254740995';

    const response = await put(id, `{"id": ${id}, "name": "Edge"}`);
    const again = await put(id, `{"name": "Edge", "tag": "t"}`);

    expect([response.status, response.text, response.headers.location, again.status, again.text]).toEqual([201, `{"id":${id},"name":"Edge"}`, `/plants/${id}`, 200, `{"id":${id},"name":"Edge","tag":"t"}`]);
  });

  it('when PUT /plants/ has no id, then 400 naming id; PUT /plants is a 405 whose Allow leaves PUT out; OPTIONS on an id lists PUT', async () => {
    const empty = await app.request.put('/plants/').set({ 'Content-Type': 'application/json', ...bearer() }).send('{"name":"x"}');
    const collection = await app.request.put('/plants').set({ 'Content-Type': 'application/json', ...bearer() }).send('{"name":"x"}');
    const options = await app.request.options('/plants/1');

    expect([empty.status, (empty.body as { error: number }).error]).toEqual([400, 40012]);
    expect([collection.status, collection.headers.allow]).toEqual([405, 'GET, HEAD, POST, OPTIONS']);
    expect(options.headers.allow).toBe('GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
  });
});
