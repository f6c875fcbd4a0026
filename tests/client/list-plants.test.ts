import { randomBytes } from 'node:crypto';
import { createClient, newPlantId, PlantStoreError, type StoredPlant } from '../../clients/typescript/src/index';
import { appForAll } from '../helpers/fixtures';
import { TOKEN } from '../helpers/test-app';

const NAMES = ['Ostrich fern', 'bird Fern', 'Cactus', 'Maidenhair fern 🌿', 'Ｆern royal', 'Bird fern'];
// name order: NFKC lower-cased by code point, ties by the exact name ('B' before 'b'), then id; Cactus is not a fern.
const BY_NAME = ['Bird fern', 'bird Fern', 'Ｆern royal', 'Maidenhair fern 🌿', 'Ostrich fern'];

const names = (plants: StoredPlant[]) => plants.map((plant) => plant.name);

describe('the TypeScript client listing plants: search, sort, count, pages and the feed position', () => {
  const app = appForAll();
  const tag = `list-${randomBytes(4).toString('hex')}`;
  const client = () => createClient({ baseUrl: app.url, token: TOKEN });
  let last: bigint;

  beforeAll(async () => {
    for (const name of NAMES) {
      const created = await client().createPlant({ id: newPlantId(), name, tag });
      last = BigInt(created.etag?.replaceAll('"', '') ?? -1);
    }
  });

  it('when a search is listed by name with a count, then pages follow the cursor in the service\'s order and the first carries the total and the position', async () => {
    const first = await client().listPlants({ q: 'FERN', tag, sort: 'name', limit: 2, count: true });
    const pages = [first];
    while (pages.at(-1)?.next !== undefined) pages.push(await client().listPlants({ next: pages.at(-1)?.next }));

    expect({ total: first.total, position: first.position, nextAfter: first.nextAfter }).toEqual({ total: 5, position: last, nextAfter: undefined });
    expect(first.next).toMatch(new RegExp(`^${app.url}/plants\\?.*cursor=`));
    expect(pages.map((page) => names(page.plants))).toEqual([BY_NAME.slice(0, 2), BY_NAME.slice(2, 4), BY_NAME.slice(4)]);
    expect(pages.map((page) => page.total)).toEqual([5, undefined, undefined]);
  });

  it('when every plant of a search is iterated by -name, then plants() follows each page to the reverse order', async () => {
    const seen: string[] = [];
    for await (const plant of client().plants({ q: 'fern', tag, sort: '-name', pageSize: 2 })) seen.push(plant.name);

    expect(seen).toEqual([...BY_NAME].reverse());
  });

  it('when listed by -id a page at a time, then nextAfter goes down and the pages hold every plant once, newest id first', async () => {
    const first = await client().listPlants({ tag, sort: '-id', limit: 4 });
    const rest = await client().listPlants({ tag, sort: '-id', limit: 4, after: first.nextAfter });
    const ids = [...first.plants, ...rest.plants].map((plant) => plant.id);

    expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : 1)));
    expect({ count: ids.length, nextAfter: first.nextAfter, more: rest.next }).toEqual({ count: 6, nextAfter: first.plants[3]?.id, more: undefined });
  });

  it('when q is only white space, then listPlants throws 400 naming q in fields', async () => {
    const error = (await client().listPlants({ q: '  ', tag }).catch((caught: unknown) => caught)) as PlantStoreError;

    expect(error).toBeInstanceOf(PlantStoreError);
    expect({ status: error.status, fields: error.fields?.map((field) => field.field) }).toEqual({ status: 400, fields: ['q'] });
  });

  it('when next names another origin, then listPlants refuses it before any request', async () => {
    const error = await client().listPlants({ next: 'http://example.org/plants?cursor=x' }).catch((caught: unknown) => caught);

    expect(error).toEqual(new TypeError(`next must be a page of ${app.url}; got http://example.org`));
  });
});
