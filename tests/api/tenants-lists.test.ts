import type { Response } from 'supertest';
import { appForAll } from '../helpers/fixtures';
import { inOrder, nextOf, SORTS, type Listed } from '../helpers/plant-lists';
import { uniqueId } from '../helpers/plants';
import { as, tenantEnv, tenantTokenFileForAll, type Caller } from '../helpers/tenant-tokens';

// GET /plants in every sort, with and without tag, q (short, and long enough for PostgreSQL's trigram shape), the
// count and the next Link, for alice and bob, who hold plants under the same ids with the same tag and names the
// same search finds (some names identical). Bob holds more, so a count or page that reads across tenants differs.
const tokens = tenantTokenFileForAll();
const app = appForAll(() => tenantEnv(tokens));

const TAG = `shared-${uniqueId()}`;
const FIRST = uniqueId();
for (let i = 0; i < 12; i += 1) uniqueId();
type Plant = { id: number; name: string; tag?: string };

/** Alice: ids FIRST..FIRST+4; bob: FIRST..FIRST+7. Names interleave in name order; two are the same in both. */
function plantsOf(caller: Caller): Plant[] {
  const count = caller === 'alice' ? 5 : 8;
  return Array.from({ length: count }, (_, k) => {
    const same = k === 0 || k === 3;
    const letter = String.fromCharCode(97 + 2 * k + (caller === 'bob' && !same ? 1 : 0));
    return { id: FIRST + k, name: `Fern ${letter}${same ? '' : ` of ${caller}`}`, ...(k % 2 === 0 ? { tag: TAG } : {}) };
  });
}
const FILTERS: { query: string; keep: (plant: Plant) => boolean }[] = [
  { query: '', keep: () => true },
  { query: `tag=${TAG}`, keep: (plant) => plant.tag === TAG },
  { query: 'q=fe', keep: () => true },
  { query: 'q=fern%20c', keep: (plant) => plant.name.startsWith('Fern c') },
  { query: `tag=${TAG}&q=fern`, keep: (plant) => plant.tag === TAG },
  { query: 'q=of%20bob', keep: (plant) => plant.name.endsWith('of bob') },
];

type Walked = { plants: Plant[]; totals: (string | undefined)[]; links: string[] };

/** Every page of `path` as `caller`, two plants a page, following the next Link; with `count`, Prefer: count=exact. */
async function walk(caller: Caller, path: string, count: boolean): Promise<Walked> {
  const walked: Walked = { plants: [], totals: [], links: [] };
  for (let next: string | undefined = path; next !== undefined; ) {
    const response: Response = await app.request.get(next).set({ ...as(caller), ...(count ? { Prefer: 'count=exact' } : {}) });
    if (response.status !== 200) throw new Error(`GET ${next} as ${caller}: ${response.status} ${response.text}`);
    walked.plants.push(...(response.body as Listed[]).map(({ id, name, tag }) => ({ id, name, ...(tag === undefined ? {} : { tag }) })));
    walked.totals.push(response.headers['x-total-count']);
    next = nextOf(response);
    if (next !== undefined) walked.links.push(next);
  }
  return walked;
}

describe('GET /plants in two tenants sharing ids, tags and names', () => {
  const listed = new Map<Caller, Listed[]>();
  beforeAll(async () => {
    // Created alternately, so their times interleave too.
    const [alice, bob] = [plantsOf('alice'), plantsOf('bob')];
    for (let k = 0; k < bob.length; k += 1) {
      for (const [caller, plant] of [['alice', alice[k]], ['bob', bob[k]]] as const) {
        if (plant !== undefined) expect((await app.request.post('/plants').set({ 'Content-Type': 'application/json', ...as(caller) }).send(JSON.stringify(plant))).status).toBe(200);
      }
    }
    for (const caller of ['alice', 'bob'] as const) listed.set(caller, (await app.request.get('/plants?limit=100').set(as(caller))).body as Listed[]);
  });

  // The tenant's own plants as created, each with the times its first list gave it (the order of the time sorts).
  const expected = (caller: Caller, sort: (typeof SORTS)[number], keep: (plant: Plant) => boolean): Plant[] => {
    const timed = plantsOf(caller)
      .filter(keep)
      .map((plant) => ({ ...(listed.get(caller) ?? []).find(({ id, name }) => id === plant.id && name === plant.name), ...plant }) as Listed);
    return inOrder(timed, sort).map(({ id, name, tag }) => ({ id, name, ...(tag === undefined ? {} : { tag }) }));
  };

  it('when each lists everything, then each gets exactly their own plants (the store holds both)', () => {
    expect([listed.get('alice')?.map(({ name }) => name), listed.get('bob')?.map(({ name }) => name)]).toEqual([
      plantsOf('alice').map(({ name }) => name),
      plantsOf('bob').map(({ name }) => name),
    ]);
  });

  describe.each(SORTS)('sort=%s', (sort) => {
    it.each(FILTERS.map(({ query }) => query))('with "%s", pages, the next Link and the count stay inside each tenant', async (query) => {
      const keep = (FILTERS.find((filter) => filter.query === query) as (typeof FILTERS)[number]).keep;
      for (const caller of ['alice', 'bob'] as const) {
        const path = `/plants?limit=2&sort=${sort}${query === '' ? '' : `&${query}`}`;
        const mine = expected(caller, sort, keep);

        const counted = await walk(caller, path, true);
        const uncounted = await walk(caller, path, false);

        expect({ caller, plants: counted.plants, totals: [...new Set(counted.totals)] }).toEqual({ caller, plants: mine, totals: [String(mine.length)] });
        expect({ caller, plants: uncounted.plants, totals: [...new Set(uncounted.totals)] }).toEqual({ caller, plants: mine, totals: [undefined] });
      }
    });
  });

  it.each(SORTS.filter((sort) => !sort.endsWith('id')))("when bob follows alice's next Link (sort=%s), then it is refused as another's cursor: 400 40041", async (sort) => {
    const { links } = await walk('alice', `/plants?limit=2&sort=${sort}&tag=${TAG}`, false);

    const followed = await app.request.get(links[0] as string).set(as('bob'));

    expect([followed.status, (followed.body as { error?: number }).error]).toEqual([400, 40041]);
  });

  it.each(['id', '-id'] as const)("when bob follows alice's next Link (sort=%s), then it names only an id: bob's own plants past it", async (sort) => {
    const { links } = await walk('alice', `/plants?limit=2&sort=${sort}`, false);
    const after = BigInt(/after=(-?\d+)/.exec(links[0] as string)?.[1] as string);

    const followed = await walk('bob', links[0] as string, true);

    const past = expected('bob', sort, (plant) => (sort === 'id' ? BigInt(plant.id) > after : BigInt(plant.id) < after));
    expect(followed.plants).toEqual(past);
  });
});
