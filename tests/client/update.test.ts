import { withTimes } from '../helpers/plants';
import { createClient, newPlantId, PlantStoreError } from '../../clients/typescript/src/index';
import { appForAll } from '../helpers/fixtures';
import { storedPlant, TOKEN } from '../helpers/test-app';
import { tokenFileForAll } from '../helpers/token-file';

const BIG = 9007199254740993n;

/** What the call rejects with; undefined when it resolves. */
const failure = (call: Promise<unknown>) => call.then(() => undefined, (error: unknown) => error as PlantStoreError);

/** fetch, keeping what the client sent. */
function recordingFetch(): { fetch: typeof fetch; sent: { method: string; url: string; headers: Record<string, string>; body?: string }[] } {
  const sent: { method: string; url: string; headers: Record<string, string>; body?: string }[] = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: input as string, headers: { ...(init?.headers as Record<string, string>) }, body: init?.body as string | undefined });
      return fetch(input, init);
    },
  };
}

describe('the TypeScript client editing plants (updatePlant, ETags)', () => {
  const app = appForAll();

  it('when plant 9007199254740993 is renamed and untagged without If-Match, then it sends a merge patch and resolves with the exact plant and its new ETag', async () => {
    const recorded = recordingFetch();
    const client = createClient({ baseUrl: app.url, token: TOKEN, fetch: recorded.fetch });
    await client.createPlant({ id: BIG, name: 'Fern', tag: 'shade' });
    const before = await client.getPlant(BIG);
    recorded.sent.length = 0;

    const updated = await client.updatePlant(BIG, { name: 'Fern renamed', tag: null });

    expect(updated).toEqual(withTimes({ id: 9007199254740993n, name: 'Fern renamed' }));
    expect(Object.keys(updated)).toEqual(['id', 'name', 'createdAt', 'updatedAt']);
    expect(updated.etag).toMatch(/^"\d+"$/);
    expect(updated.etag).not.toBe(before.etag);
    expect(recorded.sent).toEqual([
      {
        method: 'PATCH',
        url: `${app.url}/plants/9007199254740993`,
        headers: { Accept: 'application/json', Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/merge-patch+json', 'Idempotency-Key': expect.stringMatching(/^\d+-\d+-\d+-\d+$/) },
        body: '{"name":"Fern renamed","tag":null}',
      },
    ]);
    expect(storedPlant(app, BIG)).toEqual({ id: BIG, name: 'Fern renamed', tag: null });
  });

  it('when getPlant and createPlant resolve, then each carries the version\'s ETag, kept out of the plant\'s members', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const id = newPlantId();

    const created = await client.createPlant({ id, name: 'Tagged', tag: 'sun' });
    const read = await client.getPlant(id);

    expect({ created, read }).toEqual({ created: { id, name: 'Tagged', tag: 'sun' }, read: withTimes({ id, name: 'Tagged', tag: 'sun' }) });
    expect(read.etag).toMatch(/^"\d+"$/);
    expect(created.etag).toBe(read.etag);
    expect(JSON.stringify({ ...read, id: read.id.toString() })).toBe(`{"id":"${id}","name":"Tagged","tag":"sun","createdAt":"${read.createdAt}","updatedAt":"${read.updatedAt}"}`);
  });

  it('when the ETag sent in ifMatch is current, then the edit applies and the plant gets a new ETag', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const id = newPlantId();
    await client.createPlant({ id, name: 'Before' });
    const current = await client.getPlant(id);

    const updated = await client.updatePlant(id, { tag: 'after' }, { ifMatch: current.etag });

    expect(updated).toEqual(withTimes({ id, name: 'Before', tag: 'after' }));
    expect(updated.etag).not.toBe(current.etag);
    expect((await client.getPlant(id)).etag).toBe(updated.etag);
  });

  it('when the ETag sent in ifMatch is stale, then it throws PlantStoreError 412 with code 41201 and nothing changes', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const id = newPlantId();
    await client.createPlant({ id, name: 'Shared' });
    const stale = await client.getPlant(id);
    await client.updatePlant(id, { name: 'Changed by another' });

    const error = await failure(client.updatePlant(id, { name: 'Mine' }, { ifMatch: stale.etag }));

    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ status: error?.status, code: error?.code, requestId: error?.requestId }).toEqual({
      status: 412,
      code: 41201,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(storedPlant(app, id)).toEqual({ id, name: 'Changed by another', tag: null });
  });

  it('when a delete carries a stale ifMatch, then it throws 412 41201 and the plant stays', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const id = newPlantId();
    await client.createPlant({ id, name: 'Kept' });
    const stale = await client.getPlant(id);
    await client.updatePlant(id, { name: 'Kept, edited' });

    const error = await failure(client.deletePlant(id, { ifMatch: stale.etag }));

    expect({ status: error?.status, code: error?.code }).toEqual({ status: 412, code: 41201 });
    expect(storedPlant(app, id)).toEqual({ id, name: 'Kept, edited', tag: null });
  });

  it('when a field breaks its rule, then the error carries the field with its code, as for a create', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const id = newPlantId();
    await client.createPlant({ id, name: 'Valid' });

    const error = await failure(client.updatePlant(id, { name: ' ' }));

    expect({ status: error?.status, code: error?.code, fields: error?.fields }).toEqual({
      status: 400,
      code: 40006,
      fields: [{ field: 'name', code: 'blank', message: 'must have at least one non-whitespace character' }],
    });
  });

  it('when the plant does not exist, then it throws 404 40402', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });

    const error = await failure(client.updatePlant(newPlantId(), { name: 'Nobody' }));

    expect({ status: error?.status, code: error?.code }).toEqual({ status: 404, code: 40402 });
  });
});

describe('the TypeScript client editing with a token that may write but not read', () => {
  const WRITER = 'writer-token-0123456789abcdefghijklmnopqrstuvwxyz';
  const app = appForAll({ AUTH_TOKENS_FILE: tokenFileForAll({ [WRITER]: 'plants:write' }) });

  it('when updatePlant is answered 204 with no plant, then it rejects with status 204 saying the edit was stored, and the edit is stored', async () => {
    const id = newPlantId();
    await createClient({ baseUrl: app.url, token: TOKEN }).createPlant({ id, name: 'Fern' });
    const writer = createClient({ baseUrl: app.url, token: WRITER });

    const error = await failure(writer.updatePlant(id, { tag: 'shade' }));

    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ status: error?.status, code: error?.code }).toEqual({ status: 204, code: 0 });
    expect(error?.message).toMatch(/^the edit was stored \(ETag "\d+"\), but this token may not read plants/);
    expect(storedPlant(app, id)).toEqual({ id, name: 'Fern', tag: 'shade' });
  });
});
