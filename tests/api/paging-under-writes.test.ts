import type { Response } from 'supertest';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

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
