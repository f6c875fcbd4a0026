import { withTimes } from '../helpers/plants';
import { randomBytes } from 'node:crypto';
import { createClient, newPlantId, PlantStoreError } from '../../clients/typescript/src/index';
import { startTestApp, storedPlant, TOKEN, type TestApp } from '../helpers/test-app';

const BIG = 9007199254740993n;

/** fetch, counting the calls the client makes. */
function countingFetch(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    fetch: (input, init) => {
      calls.push(`${init?.method ?? 'GET'} ${input as string}`);
      return fetch(input, init);
    },
  };
}

describe('the TypeScript client against the service, in Node', () => {
  let app: TestApp;
  const tag = `client-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app.close();
  });

  it('when plant 9007199254740993 is created and read back, then the id is that exact bigint at every step', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });

    const created = await client.createPlant({ id: BIG, name: 'Past 2^53', tag });
    const read = await client.getPlant(BIG);

    expect(created).toEqual({ id: 9007199254740993n, name: 'Past 2^53', tag });
    expect(read).toEqual(withTimes({ id: 9007199254740993n, name: 'Past 2^53', tag }));
    expect(typeof read.id).toBe('bigint');
    expect(storedPlant(app, BIG)).toEqual({ id: 9007199254740993n, name: 'Past 2^53', tag });
  });

  it('when a plant has no tag, then getPlant answers exactly id, name and the times', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const id = newPlantId();

    expect(await client.createPlant({ id, name: 'Untagged' })).toEqual({ id, name: 'Untagged' });
    expect(Object.keys(await client.getPlant(id))).toEqual(['id', 'name', 'createdAt', 'updatedAt']);
  });

  it('when ids are drawn, then each is a positive int64 and most are past 2^53', () => {
    const ids = Array.from({ length: 2000 }, () => newPlantId());

    expect(ids.every((id) => typeof id === 'bigint' && id > 0n && id < 2n ** 63n)).toBe(true);
    expect(new Set(ids).size).toBe(2000);
    expect(ids.filter((id) => id > 2n ** 53n).length).toBeGreaterThan(1900);
    expect(ids.some((id) => id >= 2n ** 62n)).toBe(true);
  });

  it('when plants are listed a page at a time, then ids are exact and nextAfter is the next page\'s after', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });
    const pageTag = `${tag}-pages`;
    const ids = [BIG + 10n, BIG + 11n, BIG + 12n];
    const created = [];
    for (const id of ids) created.push(await client.createPlant({ id, name: `Paged ${id}`, tag: pageTag }));
    // A plant's ETag after a change is that change's position.
    const position = BigInt(created[2]?.etag?.replaceAll('"', '') ?? -1);

    const first = await client.listPlants({ limit: 2, tag: pageTag });
    const last = await client.listPlants({ limit: 2, tag: pageTag, after: first.nextAfter });

    expect(first).toEqual({
      plants: ids.slice(0, 2).map((id) => withTimes({ id, name: `Paged ${id}`, tag: pageTag })),
      next: `${app.url}/plants?limit=2&after=9007199254741004&tag=${pageTag}`,
      nextAfter: 9007199254741004n,
      position,
    });
    expect(last).toEqual({ plants: [withTimes({ id: 9007199254741005n, name: 'Paged 9007199254741005', tag: pageTag })], position });
  });

  it('when every plant is iterated, then it follows Link to the end with one request per page', async () => {
    const counted = countingFetch();
    const client = createClient({ baseUrl: app.url, token: TOKEN, fetch: counted.fetch });
    const walkTag = `${tag}-walk`;
    const ids = Array.from({ length: 5 }, (_, index) => BIG + 100n + BigInt(index));
    for (const id of ids) await client.createPlant({ id, name: 'Walked', tag: walkTag });
    counted.calls.length = 0;

    const seen: bigint[] = [];
    for await (const plant of client.plants({ tag: walkTag, pageSize: 2 })) seen.push(plant.id);

    expect(seen).toEqual(ids);
    expect(counted.calls).toEqual([
      `GET ${app.url}/plants?limit=2&tag=${walkTag}`,
      `GET ${app.url}/plants?limit=2&after=9007199254741094&tag=${walkTag}`,
      `GET ${app.url}/plants?limit=2&after=9007199254741096&tag=${walkTag}`,
    ]);
  });

  it('when a plant is deleted, then the call resolves with nothing and a read throws 404 with the code and request id', async () => {
    const client = createClient({ baseUrl: app.url, token: () => Promise.resolve(TOKEN) });
    const id = newPlantId();
    await client.createPlant({ id, name: 'Short-lived' });

    const deleted = await client.deletePlant(id);
    const error = await client.getPlant(id).catch((caught: unknown) => caught);

    expect(deleted).toBeUndefined();
    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ ...(error as PlantStoreError), message: (error as Error).message }).toEqual({
      name: 'PlantStoreError',
      status: 404,
      code: 40402,
      message: `id: no plant has id ${id}.`,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('when fields break their rules, then the error carries each field with its code', async () => {
    const client = createClient({ baseUrl: app.url, token: TOKEN });

    const error = (await client.createPlant({ id: newPlantId(), name: ' ', tag: 't'.repeat(101) }).catch((caught: unknown) => caught)) as PlantStoreError;

    expect({ status: error.status, code: error.code, message: error.message, fields: error.fields }).toEqual({
      status: 400,
      code: 40006,
      message: 'name: must have at least one non-whitespace character; tag: must be at most 100 characters (Unicode code points)',
      fields: [
        { field: 'name', code: 'blank', message: 'must have at least one non-whitespace character' },
        { field: 'tag', code: 'too_long', message: 'must be at most 100 characters (Unicode code points)' },
      ],
    });
  });

  it('when the token function is given, then it is called for every request', async () => {
    let calls = 0;
    const client = createClient({
      baseUrl: app.url,
      token: () => {
        calls += 1;
        return TOKEN;
      },
    });

    await client.listPlants({ limit: 1 });
    await client.listPlants({ limit: 1 });

    expect(calls).toBe(2);
  });

  it('when no token is given, then the 401 comes back as a PlantStoreError and is not retried', async () => {
    const counted = countingFetch();
    const client = createClient({ baseUrl: app.url, fetch: counted.fetch });

    const error = (await client.listPlants().catch((caught: unknown) => caught)) as PlantStoreError;

    expect({ status: error.status, code: error.code, calls: counted.calls.length }).toEqual({ status: 401, code: 40101, calls: 1 });
  });
});
