import { aNewPlant, TIME } from '../helpers/plants';
import { appForAll } from '../helpers/fixtures';
import { bearer, postPlant } from '../helpers/test-app';
import { openStream } from '../helpers/sse';

// Every answer that carries a whole plant carries createdAt and updatedAt, the times of the commits that made it
// and last changed it; the create's own answer keeps the contract's {name, tag}.
const app = appForAll();

const get = (id: number) => app.request.get(`/plants/${id}`).set(bearer());
const patch = (id: number, body: Record<string, unknown>) =>
  app.request.patch(`/plants/${id}`).set({ ...bearer(), 'Content-Type': 'application/merge-patch+json' }).send(JSON.stringify(body));

type Timed = { createdAt: string; updatedAt: string };

describe('createdAt and updatedAt', () => {
  it('when a plant is created, then the create answers {name, tag} alone and GET shows both times equal, between the request and its answer', async () => {
    const plant = aNewPlant({ name: 'Calathea', tag: 'shade' });
    const before = Date.now();

    const created = await postPlant(app, plant);
    const after = Date.now();
    const read = (await get(plant.id as number)).body as Timed;

    expect({ created: created.body as unknown, times: [TIME.test(read.createdAt), read.updatedAt === read.createdAt] }).toEqual({
      created: { name: 'Calathea', tag: 'shade' },
      times: [true, true],
    });
    expect(Date.parse(read.createdAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(read.createdAt)).toBeLessThanOrEqual(after);
  });

  it('when an edit changes something, then updatedAt moves to its commit and createdAt stays; an edit that changes nothing moves neither', async () => {
    const plant = aNewPlant({ name: 'Peperomia' });
    await postPlant(app, plant);
    const first = (await get(plant.id as number)).body as Timed;
    // Past the millisecond the create was stamped with, so a new stamp is visibly later.
    await new Promise((resolve) => setTimeout(resolve, 5));

    const edited = (await patch(plant.id as number, { name: 'Peperomia obtusifolia' })).body as Timed;
    const unchanged = (await patch(plant.id as number, { name: 'Peperomia obtusifolia' })).body as Timed;
    const read = (await get(plant.id as number)).body as Timed;

    expect(edited.createdAt).toBe(first.createdAt);
    expect(Date.parse(edited.updatedAt)).toBeGreaterThan(Date.parse(first.updatedAt));
    expect([unchanged, read].map(({ createdAt, updatedAt }) => ({ createdAt, updatedAt }))).toEqual([
      { createdAt: first.createdAt, updatedAt: edited.updatedAt },
      { createdAt: first.createdAt, updatedAt: edited.updatedAt },
    ]);
  });

  it('when a plant is created and edited, then the feed\'s events carry the same times GET answers', async () => {
    const plant = aNewPlant({ name: 'Hoya' });
    const reader = await openStream(app.url, '/plants/events', bearer());
    try {
      await postPlant(app, plant);
      const created = (await get(plant.id as number)).text;
      await patch(plant.id as number, { tag: 'trailing' });
      const edited = (await get(plant.id as number)).text;

      const events = await reader.waitFor((all) => all.filter((event) => event.data?.includes(`"id":${plant.id as number},`)).length === 2);

      expect(events.filter((event) => event.data?.includes(`"id":${plant.id as number},`)).map((event) => event.data)).toEqual([created, edited]);
    } finally {
      reader.close();
    }
  });

  it('when a client sends times in a create or an edit, then they are ignored like any unknown member', async () => {
    const plant = aNewPlant({ name: 'Pilea' });

    await postPlant(app, { ...plant, createdAt: '2000-01-01T00:00:00.000Z', updatedAt: '2000-01-01T00:00:00.000Z' });
    const edited = (await patch(plant.id as number, { tag: 'sunny', updatedAt: '2000-01-01T00:00:00.000Z' })).body as Timed;

    expect(edited.createdAt.startsWith('2000')).toBe(false);
    expect(edited.updatedAt.startsWith('2000')).toBe(false);
  });
});
