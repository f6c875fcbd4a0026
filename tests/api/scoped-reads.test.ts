import { aNewPlant, withTimes } from '../helpers/plants';
import { postPlant, storedRows } from '../helpers/test-app';
import { appForAll, identityProviderForAll } from '../helpers/fixtures';
import { tokenFileForAll } from '../helpers/token-file';

// The read and delete routes under scoped credentials: a JWT's scope/scp claim and a static token file line.
const READER = 'reader-token-0123456789abcdefghijklmnopqrstuvwxyz';

const idp = identityProviderForAll();
const file = tokenFileForAll({ [READER]: 'plants:read' });

const app = appForAll(() => ({ ...idp.env(), AUTH_TOKENS_FILE: file }));

const as = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('reads and deletes with scoped tokens', () => {
  it('when a JWT grants plants:read only, then it lists, fetches and HEADs plants', async () => {
    const plant = aNewPlant();
    expect((await postPlant(app, plant)).status).toBe(200);
    const token = await idp.mint({ scope: 'plants:read' });

    const one = await app.request.get(`/plants/${String(plant.id)}`).set(as(token));
    const list = await app.request.get(`/plants?after=${Number(plant.id) - 1}&limit=1`).set(as(token));
    const head = await app.request.head(`/plants/${String(plant.id)}`).set(as(token));

    expect([one.status, one.body, list.status, list.body, head.status]).toEqual([200, withTimes(plant), 200, [withTimes(plant)], 200]);
  });

  it('when a JWT grants plants:write as an scp array, then it deletes, and the plant is gone from disk', async () => {
    const plant = aNewPlant();
    expect((await postPlant(app, plant)).status).toBe(200);

    const response = await app.request.delete(`/plants/${String(plant.id)}`).set(as(await idp.mint({ scope: undefined, scp: ['plants:write'] })));

    expect(response.status).toBe(204);
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(false);
  });

  it('when a static digest line lists plants:read only, then GET answers 200 and DELETE 403 with the scope challenge', async () => {
    const plant = aNewPlant();
    expect((await postPlant(app, plant)).status).toBe(200);

    const read = await app.request.get(`/plants/${String(plant.id)}`).set(as(READER));
    const remove = await app.request.delete(`/plants/${String(plant.id)}`).set(as(READER));

    expect({ read: [read.status, read.body], remove: [remove.status, remove.headers['www-authenticate'], remove.body.error] }).toEqual({
      read: [200, withTimes(plant)],
      remove: [403, 'Bearer realm="plants", error="insufficient_scope", scope="plants:write"', 40301],
    });
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(true);
  });
});
