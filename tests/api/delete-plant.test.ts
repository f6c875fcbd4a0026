import { SHARED_TENANT } from '../../src/tenant';
import pino from 'pino';
import { SqliteHealth } from '../../src/db/health.sqlite';
import { SqlitePlantRepository } from '../../src/plants/plant.repository.sqlite';
import { aNewPlant, uniqueId, withTimes } from '../helpers/plants';
import { bearer, defaultStore, postPlant, storedRows } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll({ LOG_LEVEL: 'debug' });

const remove = (id: number | string) => app.request.delete(`/plants/${id}`).set(bearer());
const fetch = (id: number | string) => app.request.get(`/plants/${id}`).set(bearer());
const onDisk = (id: number | string) => storedRows(app).some((row) => row.id === BigInt(id));

describe('DELETE /plants/{id}', () => {
  it('when the plant exists, then it answers 204 with no body, the row is gone from disk and a fetch is 404', async () => {
    const plant = aNewPlant();
    await postPlant(app, plant);

    const response = await remove(plant.id as number);
    const after = await fetch(plant.id as number);

    expect({ status: response.status, text: response.text, type: response.headers['content-type'] }).toEqual({ status: 204, text: '', type: undefined });
    expect(onDisk(plant.id as number)).toBe(false);
    expect({ status: after.status, body: after.body }).toEqual({ status: 404, body: { error: 40402, message: `id: no plant has id ${plant.id as number}.` } });
  });

  it('when the same plant is deleted twice, then the second answers 404 with the plant-not-found code', async () => {
    const plant = aNewPlant();
    await postPlant(app, plant);

    const first = await remove(plant.id as number);
    const second = await remove(plant.id as number);

    expect([first.status, second.status, second.body]).toEqual([204, 404, { error: 40402, message: `id: no plant has id ${plant.id as number}.` }]);
  });

  it('when no plant ever had the id, then it answers 404 and nothing changes', async () => {
    const before = storedRows(app).length;

    const response = await remove(uniqueId());

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 404, error: 40402 });
    expect(storedRows(app)).toHaveLength(before);
  });

  it('when a deleted id is created again with another name, then it is a new plant, not a conflict', async () => {
    const plant = aNewPlant({ name: 'Old', tag: 'old' });
    await postPlant(app, plant);
    await remove(plant.id as number);

    const created = await postPlant(app, { id: plant.id, name: 'New' });
    const fetched = await fetch(plant.id as number);

    expect({ status: created.status, body: created.body }).toEqual({ status: 200, body: { name: 'New' } });
    expect(fetched.body).toEqual(withTimes({ id: plant.id, name: 'New' }));
  });

  it.each(['9223372036854775807', '-9223372036854775808', '9007199254740993'])('when the id is the int64 edge %s, then exactly that plant is deleted', async (id) => {
    await postPlant(app, `{"id": ${id}, "name": "Edge"}`);
    const neighbour = (BigInt(id) > 0n ? BigInt(id) - 1n : BigInt(id) + 1n).toString();
    await postPlant(app, `{"id": ${neighbour}, "name": "Neighbour"}`);

    const response = await remove(id);

    expect(response.status).toBe(204);
    expect([onDisk(id), onDisk(neighbour)]).toEqual([false, true]);
  });

  it.each([
    ['abc', 'type'],
    ['1.5', 'type'],
    ['01', 'type'],
    ['+1', 'type'],
    ['9223372036854775808', 'out_of_range'],
  ])('when the id is %s, then it answers 400 naming id with the code %s and deletes nothing', async (id, code) => {
    const before = storedRows(app).length;

    const response = await remove(encodeURIComponent(id));

    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: { error: 40012, message: 'id: must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)', fields: [{ field: 'id', code, message: 'must be an integer from -9223372036854775808 to 9223372036854775807 in plain decimal (no +, no leading zeros)' }] },
    });
    expect(storedRows(app)).toHaveLength(before);
  });

  it('when the id is empty, then it answers 400 naming id', async () => {
    const response = await app.request.delete('/plants/').set(bearer());

    expect({ status: response.status, error: response.body.error, message: response.body.message }).toEqual({
      status: 400,
      error: 40012,
      message: "id: is empty; send /plants/{id} with the plant's id, or GET /plants to list.",
    });
  });

  it('when no token is sent, then it answers 401 and deletes nothing', async () => {
    const plant = aNewPlant();
    await postPlant(app, plant);

    const response = await app.request.delete(`/plants/${plant.id as number}`);

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 401, error: 40101 });
    expect(onDisk(plant.id as number)).toBe(true);
  });

  it('when creates and deletes arrive together, then each is answered after a group commit that holds it', async () => {
    const plants = Array.from({ length: 10 }, () => aNewPlant());
    for (const plant of plants.slice(0, 5)) await postPlant(app, plant);
    const commits = () => app.logs.filter((line) => line.msg === 'group commit') as unknown as { rows: number }[];
    const before = commits().length;

    const responses = await Promise.all([
      ...plants.slice(0, 5).map((plant) => remove(plant.id as number)),
      ...plants.slice(5).map((plant) => postPlant(app, plant)),
    ]);

    expect(responses.map((response) => response.status)).toEqual([204, 204, 204, 204, 204, 200, 200, 200, 200, 200]);
    const batches = commits().slice(before).map((batch) => batch.rows);
    expect(batches.reduce((sum, rows) => sum + rows, 0)).toBe(10);
    expect(plants.map((plant) => onDisk(plant.id as number))).toEqual([false, false, false, false, false, true, true, true, true, true]);
  });
});

// SqlitePlantRepository over app.db; tests/store/plant-repository.test.ts holds the same order on PostgreSQL.
const sqliteOnly = defaultStore() === 'postgres' ? describe.skip : describe;

sqliteOnly('group commit order of creates and deletes', () => {
  // The store on its own, so both writes surely land in one event-loop turn; HTTP cannot promise that.
  const store = () => {
    const logger = pino({ level: 'silent' });
    return new SqlitePlantRepository(app.db, logger, new SqliteHealth(app.db, logger, 2000));
  };

  it('when a create and then a delete of one id arrive in one turn, then the plant is created and then gone', async () => {
    const repository = store();
    const plant = { id: BigInt(uniqueId()), name: 'Brief' };

    const [created, deleted] = await Promise.all([repository.create(SHARED_TENANT, plant), repository.delete(SHARED_TENANT, plant.id)]);

    expect([created.outcome, deleted]).toEqual(['created', { outcome: 'deleted' }]);
    expect(onDisk(plant.id.toString())).toBe(false);
  });

  it('when a delete and then a create of one id arrive in one turn, then the delete finds nothing and the plant stays', async () => {
    const repository = store();
    const plant = { id: BigInt(uniqueId()), name: 'Late' };

    const [deleted, created] = await Promise.all([repository.delete(SHARED_TENANT, plant.id), repository.create(SHARED_TENANT, plant)]);

    expect([deleted, created.outcome]).toEqual([{ outcome: 'missing' }, 'created']);
    expect(onDisk(plant.id.toString())).toBe(true);
  });

  it('when create, delete, create of one id arrive in one turn, then the second create is a new plant, not a conflict', async () => {
    const repository = store();
    const id = BigInt(uniqueId());

    const [first, deleted, second] = await Promise.all([
      repository.create(SHARED_TENANT, { id, name: 'First' }),
      repository.delete(SHARED_TENANT, id),
      repository.create(SHARED_TENANT, { id, name: 'Second' }),
    ]);

    expect([first.outcome, deleted, second]).toEqual(['created', { outcome: 'deleted' }, { outcome: 'created', stored: withTimes({ id, name: 'Second' }), version: expect.any(BigInt) }]);
    expect(storedRows(app).find((row) => row.id === id)?.name).toBe('Second');
  });
});
