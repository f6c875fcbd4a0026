import { aNewPlant, uniqueId, plantText, withTimes } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll, perTest } from '../helpers/fixtures';

const app = appForAll();
const open = perTest();

const get = (path: string) => app.request.get(path).set(bearer());

describe('GET /plants/{id}', () => {
  it('when the plant exists, then it answers 200 with id, name and tag, not to be cached', async () => {
    const plant = aNewPlant({ name: 'Ficus lyrata', tag: 'indoor' });
    await postPlant(app, plant);

    const response = await get(`/plants/${plant.id as number}`);

    expect({ status: response.status, type: response.type, cache: response.headers['cache-control'], text: response.text }).toEqual({
      status: 200,
      type: 'application/json',
      cache: 'no-store',
      text: plantText(`{"id":${plant.id as number},"name":"Ficus lyrata","tag":"indoor"}`),
    });
  });

  it('when the plant has no tag, then tag is left out', async () => {
    const { tag: _tag, ...plant } = aNewPlant({ name: 'Aloe "vera"\u00e9\u{1F335}' });
    await postPlant(app, plant);

    const response = await get(`/plants/${plant.id as number}`);

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: withTimes({ id: plant.id, name: 'Aloe "vera"\u00e9\u{1F335}' }) });
  });

  it('when no plant has the id, then it answers 404 with the plant-not-found code', async () => {
    const id = uniqueId();

    const response = await get(`/plants/${id}`);

    expect({ status: response.status, body: response.body }).toEqual({
      status: 404,
      body: { error: 40402, message: `id: no plant has id ${id}.` },
    });
  });

  it.each([
    ['9007199254740993'],
    ['-9223372036854775808'],
    ['9223372036854775807'],
    ['0'],
  ])('when the id is the int64 edge %s, then the body carries it digit for digit as a JSON number', async (id) => {
    await postPlant(app, `{"id": ${id}, "name": "Edge ${id}"}`);

    const response = await get(`/plants/${id}`);

    expect({ status: response.status, text: response.text }).toEqual({ status: 200, text: plantText(`{"id":${id},"name":"Edge ${id}"}`) });
  });

  it.each([
    ['abc', '/plants/abc', 'type'],
    ['1.5', '/plants/1.5', 'type'],
    ['9223372036854775808', '/plants/9223372036854775808', 'out_of_range'],
    ['-9223372036854775809', '/plants/-9223372036854775809', 'out_of_range'],
    ['01', '/plants/01', 'type'],
    ['+1', '/plants/+1', 'type'],
    ['-0', '/plants/-0', 'type'],
    ['1e3', '/plants/1e3', 'type'],
    ['%20 1', '/plants/%201', 'type'],
    ['a 20-digit number', '/plants/12345678901234567890', 'out_of_range'],
  ])('when the id is %s, then it answers 400 naming id with the code %s, never 404 or 500', async (_case, path, code) => {
    const response = await get(path);

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 40012,
        message: 'id: must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)',
        fields: [{ field: 'id', code, message: 'must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)' }],
      },
    });
  });

  it('when the id is empty, then it answers 400 naming id', async () => {
    const response = await get('/plants/');

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        error: 40012,
        message: "id: is empty; send /plants/{id} with the plant's id, or GET /plants to list.",
        fields: [{ field: 'id', code: 'required', message: "is empty; send /plants/{id} with the plant's id, or GET /plants to list." }],
      },
    });
  });

  it('when HEAD is sent, then it answers the headers of GET with no body', async () => {
    const plant = aNewPlant();
    await postPlant(app, plant);
    const full = await get(`/plants/${plant.id as number}`);

    const response = await app.request.head(`/plants/${plant.id as number}`).set(bearer());

    expect({ status: response.status, length: response.headers['content-length'], cache: response.headers['cache-control'], text: response.text }).toEqual({
      status: 200,
      length: String(Buffer.byteLength(full.text)),
      cache: 'no-store',
      text: undefined,
    });
  });

  it('when a plant is created, then that response is not to be cached either', async () => {
    const response = await postPlant(app, aNewPlant());

    expect({ status: response.status, cache: response.headers['cache-control'] }).toEqual({ status: 200, cache: 'no-store' });
  });

  it('when reads, deletes and creates come from one token, then they count against one rate limit', async () => {
    const limited = await open.app({ RATE_LIMIT_PER_MINUTE: '3' });
    const plant = aNewPlant();

    const statuses = [
      (await postPlant(limited, plant)).status,
      (await limited.request.get(`/plants/${plant.id as number}`).set(bearer())).status,
      (await limited.request.delete(`/plants/${plant.id as number}`).set(bearer())).status,
      (await limited.request.get('/plants').set(bearer())).status,
    ];

    expect(statuses).toEqual([200, 200, 204, 429]);
  });

  it('when no token is sent, then it answers 401 like a create', async () => {
    const response = await app.request.get('/plants/1');

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 401, error: 40101 });
  });
});
