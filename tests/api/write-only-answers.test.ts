import { aNewPlant, plantText } from '../helpers/plants';
import { bearer, postPlant, storedPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { tokenFileForAll } from '../helpers/token-file';

// What a token granting plants:write without plants:read learns from the answers to its writes (docs/auth.md).
const WRITER = 'writer-token-0123456789abcdefghijklmnopqrstuvwxyz';
const file = tokenFileForAll({ [WRITER]: 'plants:write' });

const app = appForAll({ AUTH_TOKENS_FILE: file });

const writer = { Authorization: `Bearer ${WRITER}` };
const patch = (id: number, body: string, headers: Record<string, string> = {}) =>
  app.request.patch(`/plants/${id}`).set({ 'Content-Type': 'application/merge-patch+json', ...headers }).send(body);

async function created(overrides: Record<string, unknown> = {}) {
  const plant = aNewPlant(overrides);
  const response = await postPlant(app, plant);
  expect(response.status).toBe(200);
  return { plant, id: plant.id as number, etag: response.headers.etag as string };
}

// Only what a reader of the answer sees: no body, no type, the version, no-store.
const answerOf = (response: { status: number; text: string; headers: Record<string, string | undefined> }) => ({
  status: response.status,
  text: response.text,
  type: response.headers['content-type'],
  length: response.headers['content-length'],
  cache: response.headers['cache-control'],
  etag: response.headers.etag,
});

describe('PATCH /plants/{id} with a token that has plants:write but not plants:read', () => {
  it('when the patch is empty, then it answers 204 with the ETag and no body, and nothing is written', async () => {
    const { id, etag } = await created({ name: 'Secret fern', tag: 'private' });

    const response = await patch(id, '{}', writer);

    expect(answerOf(response)).toEqual({ status: 204, text: '', type: undefined, length: undefined, cache: 'no-store', etag });
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'Secret fern', tag: 'private' });
  });

  it('when it changes the name, then it answers 204 with the new ETag, so the stored tag stays unread; GET with plants:read agrees', async () => {
    const { id, etag } = await created({ name: 'Secret fern', tag: 'private' });

    const response = await patch(id, '{"name":"Renamed"}', writer);
    const read = await app.request.get(`/plants/${id}`).set(bearer());

    expect(answerOf(response)).toEqual({ status: 204, text: '', type: undefined, length: undefined, cache: 'no-store', etag: expect.stringMatching(/^"\d+"$/) });
    expect(response.headers.etag).not.toBe(etag);
    expect({ text: read.text, etag: read.headers.etag }).toEqual({ text: plantText(`{"id":${id},"name":"Renamed","tag":"private"}`), etag: response.headers.etag });
  });

  it('when the same edit comes with a token that also has plants:read, then it answers 200 with the plant', async () => {
    const { id } = await created({ name: 'Secret fern', tag: 'private' });

    const response = await patch(id, '{"name":"Renamed"}', bearer());

    expect({ status: response.status, text: response.text }).toEqual({ status: 200, text: plantText(`{"id":${id},"name":"Renamed","tag":"private"}`) });
  });

  it('when If-Match is stale or the plant is missing, then it answers 412 or 404 as for any caller, and nothing changes', async () => {
    const { id } = await created({ name: 'Secret fern', tag: 'private' });

    const stale = await patch(id, '{"name":"x"}', { ...writer, 'If-Match': '"1"' });
    const missing = await patch(id + 1, '{}', writer);

    expect([stale.status, stale.body.error, missing.status, missing.body.error]).toEqual([412, 41201, 404, 40402]);
    expect(JSON.stringify([stale.body, missing.body])).not.toContain('Secret fern');
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'Secret fern', tag: 'private' });
  });
});

describe('other writes with a token that has plants:write but not plants:read', () => {
  it('when it re-sends a stored plant, then the answer echoes only what it sent; another name is a conflict naming nothing stored', async () => {
    const { plant, etag } = await created({ name: 'Secret fern', tag: 'private' });

    const again = await postPlant(app, plant, writer);
    const other = await postPlant(app, { ...plant, name: 'A guess' }, writer);

    expect({ status: again.status, body: again.body, etag: again.headers.etag }).toEqual({ status: 200, body: { name: 'Secret fern', tag: 'private' }, etag });
    expect([other.status, other.body.error]).toEqual([400, 40007]);
    expect(other.text).not.toContain('Secret fern');
  });

  it('when it deletes, then it answers 204 with no body, and 404 once the plant is gone', async () => {
    const { id } = await created();

    const removed = await app.request.delete(`/plants/${id}`).set(writer);
    const again = await app.request.delete(`/plants/${id}`).set(writer);

    expect([removed.status, removed.text, again.status, again.body.error]).toEqual([204, '', 404, 40402]);
  });
});

describe('PUT and POST /plants/batch with a token that has plants:write but not plants:read', () => {
  it('when it puts, then the answer is the plant it sent, with its id; an update in a batch answers 204 with the ETag and no plant', async () => {
    const { id } = await created({ name: 'Fern', tag: 'shade' });

    const put = await app.request.put(`/plants/${id}`).set({ 'Content-Type': 'application/json', ...writer }).send('{"name":"Fern"}');
    const batch = await app.request
      .post('/plants/batch')
      .set({ 'Content-Type': 'application/json', ...writer })
      .send(JSON.stringify({ operations: [{ op: 'update', id, patch: { tag: 'sun' } }, { op: 'delete', id }] }));

    expect([put.status, put.text]).toEqual([200, `{"id":${id},"name":"Fern"}`]);
    expect([batch.status, batch.text]).toEqual([200, expect.stringMatching(/^\{"results":\[\{"status":204,"etag":"\\"\d+\\""\},\{"status":204\}\]\}$/)]);
    expect(storedPlant(app, id)).toBeUndefined();
  });
});
