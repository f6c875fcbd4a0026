import type { Response } from 'supertest';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { inOrder, SORTS, walk, type Listed } from '../helpers/plant-lists';

const app = appForAll();

// The listed plants have even ids; the other client's plants odd ids in the same range, so its creates and
// deletes land both behind and ahead of the reader's position.
const BASE = 7_000_000;
const COUNT = 2500;
const listed = Array.from({ length: COUNT }, (_, index) => BASE + 2 * index);

async function createAll(ids: number[], concurrency: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++] as number;
        const response = await postPlant(app, { id, name: `Listed ${id}` });
        if (response.status !== 200) throw new Error(`create ${id}: ${response.status}`);
      }
    }),
  );
}

describe('paging GET /plants while another client writes', () => {
  it('when 2,500 plants are paged with limit=100 while another client creates and deletes between pages, then each comes exactly once, in order', async () => {
    await createAll(listed, 25);
    const others: number[] = [];
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const seen: number[] = [];
    let path: string | undefined = '/plants?limit=100';
    let pages = 0;

    while (path !== undefined) {
      const response: Response = await app.request.get(path).set(bearer());
      expect(response.status).toBe(200);
      seen.push(...(response.body as { id: number }[]).map((plant) => plant.id));
      path = /^<([^>]+)>; rel="next"$/.exec(response.headers.link ?? '')?.[1];
      pages += 1;
      // The other client: two creates anywhere in the range, one delete of one of its own earlier plants.
      for (let i = 0; i < 2; i += 1) {
        const id = BASE + 2 * Math.floor(random() * COUNT) + 1;
        if (!others.includes(id) && (await postPlant(app, { id, name: `Other ${id}` })).status === 200) others.push(id);
      }
      const victim = others.splice(Math.floor(random() * others.length), 1)[0];
      if (victim !== undefined) expect((await app.request.delete(`/plants/${victim}`).set(bearer())).status).toBe(204);
    }

    expect(seen.filter((id) => id % 2 === 0)).toEqual(listed);
    expect(seen.every((id, index) => index === 0 || id > (seen[index - 1] as number))).toBe(true);
    expect(pages).toBeGreaterThanOrEqual(COUNT / 100);
  });
});

describe('paging GET /plants in every sort while another client writes', () => {
  // Both clients' plants hold the word, so the search interleaves them; the listed plants are never changed.
  const word = `pw${BASE}x${Math.floor(Math.random() * 1e6)}`;
  const prefixes = ['Fern', 'fern', 'FERN', 'Ägave', 'agave', 'ﬁg', 'Fig', '🌵', 'Zebra', 'ß', 'ss', 'İris'];
  const listedPlants: Listed[] = [];
  const others = new Map<number, string>();
  let nextOther = BASE + 10 * COUNT;
  beforeAll(async () => {
    const plants = Array.from({ length: 240 }, (_, index) => ({ id: BASE + 5 * COUNT + index, name: `${prefixes[index % prefixes.length] as string} ${word} ${index % 7}` }));
    // In bursts of 20: plants of one group commit share a createdAt, ties broken by id.
    for (let start = 0; start < plants.length; start += 20) {
      const responses = await Promise.all(plants.slice(start, start + 20).map((plant) => postPlant(app, plant)));
      expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    }
    listedPlants.push(...((await app.request.get(`/plants?q=${word}&limit=1000`).set(bearer())).body as Listed[]));
  });

  // The other client, between pages: two creates, a rename and a delete of its own plants, all within the search.
  async function otherWrites(): Promise<void> {
    for (let i = 0; i < 2; i += 1) {
      nextOther += 1;
      const name = `${prefixes[nextOther % prefixes.length] as string} ${word} other`;
      expect((await postPlant(app, { id: nextOther, name })).status).toBe(200);
      others.set(nextOther, name);
    }
    const ids = [...others.keys()];
    const renamed = ids[Math.floor(Math.random() * ids.length)] as number;
    const patch = await app.request.patch(`/plants/${renamed}`).set({ 'Content-Type': 'application/json', ...bearer() }).send(JSON.stringify({ name: `${prefixes[Math.floor(Math.random() * prefixes.length)] as string} ${word} moved` }));
    expect(patch.status).toBe(200);
    const victim = ids[Math.floor(Math.random() * ids.length)] as number;
    if (victim !== renamed) {
      expect((await app.request.delete(`/plants/${victim}`).set(bearer())).status).toBe(204);
      others.delete(victim);
    }
  }

  it.each(SORTS)('when sort=%s is paged with limit=20 while the other client writes, then each listed plant comes exactly once, in order', async (sort) => {
    const { plants } = await walk(app, `/plants?q=${word}&sort=${sort}&limit=20`, otherWrites);

    const listedIds = new Set(listedPlants.map((plant) => plant.id));
    expect(plants.map((plant) => plant.id).filter((id) => listedIds.has(id))).toEqual(inOrder(listedPlants, sort).map((plant) => plant.id));
  });
});
