import { aNewPlant } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { openStream } from '../helpers/sse';

const app = appForAll();

const createdIds = (data: (string | undefined)[]) => new Set(data.map((text) => /^\{"id":(-?\d+),/.exec(text ?? '')?.[1]).filter((id) => id !== undefined));

describe('GET /plants/events resumed while others write', () => {
  it('when the only reader resumes with Last-Event-ID while creates commit one after another, then every create after its position arrives, each once, in order', async () => {
    for (let round = 0; round < 15; round += 1) {
      const before = await postPlant(app, aNewPlant());
      const after = (before.headers.etag as string).replaceAll('"', '');
      const plants = Array.from({ length: 20 }, () => aNewPlant());

      // One create after another, so that commits land before, during and after the reader's catch-up.
      const writes = (async () => {
        for (const plant of plants) await postPlant(app, plant);
      })();
      const reader = await openStream(app.url, '/plants/events', { ...bearer(), 'Last-Event-ID': after });
      await writes;
      const wanted = plants.map((plant) => String(plant.id));
      const seen = () => createdIds(reader.named().map((event) => event.data));
      await reader.waitFor(() => wanted.every((id) => seen().has(id)), 3000).catch(() => undefined);
      reader.close();

      const positions = reader.named().map((event) => BigInt(event.id as string));
      expect({ round, missing: wanted.filter((id) => !seen().has(id)) }).toEqual({ round, missing: [] });
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
      expect(new Set(positions).size).toBe(positions.length);
    }
  });
});
