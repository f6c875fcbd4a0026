import { aNewPlant, uniqueId, plantText } from '../helpers/plants';
import { bearer, postPlant, storedPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll({ CORS_ORIGINS: 'https://app.example.com' });

const patch = (id: number | string, body: unknown, headers: Record<string, string> = {}) =>
  app.request
    .patch(`/plants/${id}`)
    .set({ 'Content-Type': 'application/merge-patch+json', ...bearer(), ...headers })
    .send(typeof body === 'string' ? body : JSON.stringify(body));
const get = (id: number | string, headers: Record<string, string> = {}) => app.request.get(`/plants/${id}`).set({ ...bearer(), ...headers });

async function created(overrides: Record<string, unknown> = {}) {
  const plant = aNewPlant(overrides);
  const response = await postPlant(app, plant);
  expect(response.status).toBe(200);
  return { id: plant.id as number, etag: response.headers.etag as string };
}

describe('PATCH /plants/{id}', () => {
  it('when a name is sent, then only the name changes and it answers 200 with the plant and a new ETag that GET agrees with', async () => {
    const { id, etag } = await created({ name: 'Monstera', tag: 'indoor' });

    const response = await patch(id, { name: 'Monstera deliciosa', colour: 'ignored' });
    const read = await get(id);

    expect({ status: response.status, type: response.type, cache: response.headers['cache-control'], text: response.text }).toEqual({
      status: 200,
      type: 'application/json',
      cache: 'no-store',
      text: plantText(`{"id":${id},"name":"Monstera deliciosa","tag":"indoor"}`),
    });
    expect(response.headers.etag).toMatch(/^"\d+"$/);
    expect(response.headers.etag).not.toBe(etag);
    expect({ text: read.text, etag: read.headers.etag }).toEqual({ text: response.text, etag: response.headers.etag });
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'Monstera deliciosa', tag: 'indoor' });
  });

  it('when tag is null, then the tag is removed; when given, it is replaced; application/json works as well', async () => {
    const { id } = await created({ name: 'Pothos', tag: 'hanging' });

    const removed = await patch(id, { tag: null }, { 'Content-Type': 'application/json' });
    const replaced = await patch(id, { tag: 'shelf' });

    expect([removed.status, removed.text, replaced.status, replaced.text]).toEqual([
      200,
      plantText(`{"id":${id},"name":"Pothos"}`),
      200,
      plantText(`{"id":${id},"name":"Pothos","tag":"shelf"}`),
    ]);
  });

  it('when the id is an int64 edge past 2^53, then the body carries it exactly', async () => {
    await postPlant(app, '{"id": 9007199254740993, "name": "Edge"}');

    const response = await patch('9007199254740993', '{"id": 9007199254740993, "name": "Edge renamed"}');

    expect({ status: response.status, text: response.text }).toEqual({ status: 200, text: plantText('{"id":9007199254740993,"name":"Edge renamed"}') });
  });

  it('when fields break the create rules, then it answers 400 40006 with the same fields as a create, and nothing changes', async () => {
    const { id } = await created({ name: 'Calathea' });

    const response = await patch(id, { name: '', tag: 5 });

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 40006,
        message: 'name: must have at least one non-whitespace character; tag: must be a string, or null to remove the tag',
        fields: [
          { field: 'name', code: 'too_short', message: 'must have at least one non-whitespace character' },
          { field: 'tag', code: 'type', message: 'must be a string, or null to remove the tag' },
        ],
      },
    });
    expect(storedPlant(app, id)?.name).toBe('Calathea');
  });

  it('when the body has another id than the path, then it answers 400 naming id; the same id is fine', async () => {
    const { id } = await created();

    const other = await patch(id, { id: id + 1, name: 'x' });
    const same = await patch(id, { id, name: 'Same id' });

    expect({ status: other.status, body: other.body }).toEqual({
      status: 400,
      body: {
        error: 40006,
        message: `id: must be the id in the path (${id}), or left out; an id cannot be changed`,
        fields: [{ field: 'id', code: 'mismatch', message: `must be the id in the path (${id}), or left out; an id cannot be changed` }],
      },
    });
    expect(same.status).toBe(200);
  });

  it('when no plant has the id, then it answers 404 40402', async () => {
    const id = uniqueId();

    const response = await patch(id, { name: 'nobody' });

    expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: { error: 40402, message: `id: no plant has id ${id}.` } });
  });

  it('when the body is not JSON or not an object, then it answers the create body errors', async () => {
    const { id } = await created();

    const responses = await Promise.all([patch(id, '{"name":'), patch(id, '[1]'), patch(id, 'x', { 'Content-Type': 'text/plain' })]);

    expect(responses.map((response) => (response.body as { error: number }).error)).toEqual([40001, 40002, 40003]);
  });

  it('when If-Match carries the current ETag, then it applies; a stale one is 412 41201 and nothing changes', async () => {
    const { id, etag } = await created({ name: 'Ivy' });
    const first = await patch(id, { name: 'Ivy 2' }, { 'If-Match': etag });

    const stale = await patch(id, { name: 'Ivy from a stale page' }, { 'If-Match': etag });
    const weak = await patch(id, { name: 'weak' }, { 'If-Match': `W/${first.headers.etag as string}` });
    const any = await patch(id, { name: 'Ivy 3' }, { 'If-Match': `"1", ${first.headers.etag as string}` });

    expect(first.status).toBe(200);
    expect({ status: stale.status, error: (stale.body as { error: number }).error, weak: weak.status, any: any.status }).toEqual({
      status: 412,
      error: 41201,
      weak: 412,
      any: 200,
    });
    expect(storedPlant(app, id)?.name).toBe('Ivy 3');
  });

  it('when ten PATCHes carry the same current ETag at once, then one answers 200 and nine 412', async () => {
    const { id, etag } = await created({ name: 'Race' });

    const responses = await Promise.all(Array.from({ length: 10 }, (_, n) => patch(id, { name: `Racer ${n}` }, { 'If-Match': etag })));

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412, 412, 412]);
    const winner = responses.find((response) => response.status === 200);
    expect(storedPlant(app, id)?.name).toBe((winner?.body as { name: string }).name);
  });

  it('when a create is replayed after an edit, then it answers 400 40007 and the edit stays', async () => {
    const plant = aNewPlant({ name: 'Original' });
    await postPlant(app, plant);
    await patch(plant.id as number, { name: 'Edited' });

    const replay = await postPlant(app, plant);

    expect({ status: replay.status, error: (replay.body as { error: number }).error }).toEqual({ status: 400, error: 40007 });
    expect(storedPlant(app, plant.id as number)?.name).toBe('Edited');
  });

  it('when the token lacks plants:write, then PATCH is refused as a create would be', async () => {
    const { id } = await created();

    const response = await app.request.patch(`/plants/${id}`).set('Content-Type', 'application/json').send('{"name":"anon"}');

    expect(response.status).toBe(401);
  });
});

describe('DELETE /plants/{id} with If-Match', () => {
  it('when the ETag is stale, then it answers 412 and the plant stays; with the current one it is deleted', async () => {
    const { id, etag } = await created();
    const edited = await patch(id, { name: 'changed' });

    const stale = await app.request.delete(`/plants/${id}`).set({ ...bearer(), 'If-Match': etag });
    const current = await app.request.delete(`/plants/${id}`).set({ ...bearer(), 'If-Match': edited.headers.etag });

    expect([stale.status, (stale.body as { error: number }).error, current.status]).toEqual([412, 41201, 204]);
    expect(storedPlant(app, id)).toBeUndefined();
  });
});

describe('GET /plants/{id} with ETag', () => {
  it('when If-None-Match names the current ETag, then it answers 304 with no body; after an edit, 200', async () => {
    const { id } = await created();
    const first = await get(id);
    const etag = first.headers.etag as string;

    const unchanged = await get(id, { 'If-None-Match': etag });
    await patch(id, { name: 'new name' });
    const changed = await get(id, { 'If-None-Match': etag });

    expect({ status: unchanged.status, text: unchanged.text, etag: unchanged.headers.etag }).toEqual({ status: 304, text: '', etag });
    expect({ status: changed.status, name: (changed.body as { name: string }).name }).toEqual({ status: 200, name: 'new name' });
    expect(changed.headers.etag).not.toBe(etag);
  });
});

describe('CORS for edits and the feed', () => {
  it('when a browser preflights a PATCH with If-Match, then it is allowed and ETag is exposed', async () => {
    const { id } = await created();

    const preflight = await app.request
      .options(`/plants/${id}`)
      .set({ Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'PATCH', 'Access-Control-Request-Headers': 'authorization, if-match, content-type' });
    const answer = await patch(id, { name: 'from a browser' }, { Origin: 'https://app.example.com' });

    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-methods']).toContain('PATCH');
    expect(preflight.headers['access-control-allow-headers']).toEqual(expect.stringContaining('If-Match'));
    expect(preflight.headers['access-control-allow-headers']).toEqual(expect.stringContaining('If-None-Match'));
    expect(preflight.headers['access-control-allow-headers']).toEqual(expect.stringContaining('Last-Event-ID'));
    expect(answer.headers['access-control-expose-headers']).toEqual(expect.stringContaining('ETag'));
  });
});
