import { uniqueId } from '../helpers/plants';
import { bearer, postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { openStream, type SseStream } from '../helpers/sse';
import { keyOf, type Listed } from '../helpers/plant-lists';

const app = appForAll();
const streams: SseStream[] = [];
afterAll(() => {
  for (const stream of streams) stream.close();
});

const json = { 'Content-Type': 'application/json', ...bearer() };

/**
 * Another client's writes, until stopped: creates inside and outside the search, renames across it, deletes, from
 * four workers at once so commits batch several changes. Ids are never reused.
 */
function writer(word: string): { stop: () => Promise<void> } {
  const ids: number[] = [];
  let running = true;
  const worker = async (seed: number) => {
    for (let step = seed; running; step += 1) {
      const id = ids[(step * 7919) % Math.max(ids.length, 1)];
      if (step % 4 !== 3 || id === undefined) {
        const created = uniqueId();
        expect((await postPlant(app, { id: created, name: step % 3 === 0 ? `Palm ${created}` : `${word.toUpperCase()} ${created}` })).status).toBe(200);
        ids.push(created);
      } else if (step % 8 === 3) {
        const response = await app.request.delete(`/plants/${id}`).set(bearer());
        expect([204, 404]).toContain(response.status);
        ids.splice(ids.indexOf(id), 1);
      } else {
        const response = await app.request.patch(`/plants/${id}`).set(json).send(JSON.stringify({ name: step % 16 === 7 ? `Cactus ${step}` : `ﬁ ${word} ${step}` }));
        expect([200, 404]).toContain(response.status);
      }
    }
  };
  const workers = [0, 1, 2, 3].map((seed) => worker(seed * 1000));
  return {
    stop: async () => {
      running = false;
      await Promise.all(workers);
    },
  };
}

type Round = { position: bigint; snapshot: Map<number, Listed>; stream: SseStream };

async function listThenFollow(word: string): Promise<Round> {
  const response = await app.request.get(`/plants?q=${word}&limit=1000`).set({ ...bearer(), Prefer: 'count=exact' });
  expect(response.status).toBe(200);
  const plants = response.body as Listed[];
  expect(Number(response.headers['x-total-count'])).toBe(plants.length);
  const position = BigInt(response.headers['feed-position'] as string);
  const stream = await openStream(app.url, `/plants/events?q=${word}&after=${position}`, bearer());
  streams.push(stream);
  return { position, snapshot: new Map(plants.map((plant) => [plant.id, plant])), stream };
}

type Change = { pos: bigint; kind: string; plant: Listed };

/** A stream's changes, up to and with the plant `untilId`'s create. */
function changesOf(stream: SseStream, untilId: number): Change[] {
  const changes: Change[] = [];
  for (const event of stream.named()) {
    const plant = JSON.parse(event.data as string) as Listed;
    changes.push({ pos: BigInt(event.id as string), kind: event.event as string, plant });
    if (plant.id === untilId) break;
  }
  return changes;
}

/** The plants with the changes applied, as a reader does; throws on a create of a plant already there. */
function apply(start: ReadonlyMap<number, Listed>, changes: readonly Change[], word: string): Map<number, Listed> {
  const plants = new Map(start);
  for (const { kind, plant } of changes) {
    if (kind === 'plant.created') expect(plants.has(plant.id)).toBe(false);
    if (kind === 'plant.deleted' || !keyOf(plant.name).includes(keyOf(word))) plants.delete(plant.id);
    else plants.set(plant.id, plant);
  }
  return plants;
}

describe('GET /plants, then GET /plants/events?after=Feed-Position', () => {
  it('when another client writes throughout, then each snapshot plus the events after its position is the final list: nothing missed, nothing twice', async () => {
    const word = `seam${uniqueId()}`;
    // The whole history of the search, from before the first write: what each snapshot must equal at its position.
    const history = await openStream(app.url, `/plants/events?q=${word}&after=0`, bearer());
    streams.push(history);
    const writes = writer(word);
    const rounds: Round[] = [];
    for (let round = 0; round < 8; round += 1) {
      await new Promise((resolve) => setTimeout(resolve, 40 + 30 * round));
      rounds.push(await listThenFollow(word));
    }
    await writes.stop();
    const end = uniqueId();
    expect((await postPlant(app, { id: end, name: `${word} end` })).status).toBe(200);
    const carriesEnd = (stream: SseStream) => stream.waitFor((events) => events.some((event) => event.data?.startsWith(`{"id":${end},`)), 15_000);
    await Promise.all([history, ...rounds.map((round) => round.stream)].map(carriesEnd));

    const final = (await app.request.get(`/plants?q=${word}&limit=1000`).set(bearer())).body as Listed[];
    const all = changesOf(history, end);
    expect(new Set(rounds.map((round) => round.position)).size).toBeGreaterThan(1);
    for (const round of rounds) {
      const followed = changesOf(round.stream, end);
      // The snapshot is the history up to its position: the rows and Feed-Position are one snapshot.
      expect(round.snapshot).toEqual(apply(new Map(), all.filter((change) => change.pos <= round.position), word));
      // The stream after that position is the history after it, each change once.
      expect(followed.map((change) => change.pos)).toEqual(all.filter((change) => change.pos > round.position).map((change) => change.pos));
      expect(apply(round.snapshot, followed, word)).toEqual(new Map(final.map((plant) => [plant.id, plant])));
    }
  }, 60_000);
});
