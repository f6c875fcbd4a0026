import { aNewPlant, plantText, withTimes } from '../helpers/plants';
import { bearer, postPlant, storedEvents } from '../helpers/test-app';
import { perTest } from '../helpers/fixtures';
import { runCli } from '../helpers/plant-store-cli';
import { openStream, type SseEvent } from '../helpers/sse';

const { receiver, appWith } = perTest();

const about = (id: unknown) => (events: SseEvent[]) => events.filter((event) => event.data?.startsWith(`{"id":${id as number},`));

describe('plants imported with plant-store import, as the service sees them', () => {
  it('when plants are imported into the served store, then each has its own ETag, takes a PATCH with If-Match of it, and is a plant.created event; no webhook; a second import writes nothing', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url, { WEBHOOK_EVENTS: 'plant.created,plant.updated,plant.deleted' });
    const earlier = await postPlant(app, aNewPlant());
    const [first, second] = [aNewPlant({ tag: 'imported' }), aNewPlant()];
    const lines = `${JSON.stringify(first)}\n${JSON.stringify(second)}\n`;
    const databaseUrl = app.store === 'sqlite' ? `file:${app.dbPath}` : app.dbPath;

    const imported = await runCli(['import'], { DATABASE_URL: databaseUrl }, lines);
    const again = await runCli(['import'], { DATABASE_URL: databaseUrl }, lines);
    const read = await app.request.get(`/plants/${first.id as number}`).set(bearer());
    const edited = await app.request
      .patch(`/plants/${first.id as number}`)
      .set({ ...bearer(), 'Content-Type': 'application/merge-patch+json', 'If-Match': read.headers.etag })
      .send('{"name":"Edited after the import"}');
    const later = aNewPlant();
    await postPlant(app, later);
    const feed = await openStream(app.url, '/plants/events?after=0', bearer());
    const events = await feed.waitFor((all) => about(later.id)(all).length === 1);
    feed.close();
    await hooks.waitFor((all) => all.length === 3);

    expect([imported.code, again.code, imported.stdout.includes(': 2 new plants, 0 already stored;'), again.stdout.includes(': 0 new plants, 2 already stored;')]).toEqual([0, 0, true, true]);
    const position = (etag: unknown) => BigInt((etag as string).slice(1, -1));
    expect(position(read.headers.etag)).toBeGreaterThan(position(earlier.headers.etag));
    expect({ status: edited.status, body: edited.body as unknown }).toEqual({ status: 200, body: withTimes({ id: first.id, name: 'Edited after the import', tag: 'imported' }) });
    expect([...about(first.id)(events), ...about(second.id)(events), ...about(later.id)(events)]).toEqual([
      { event: 'plant.created', id: (read.headers.etag as string).slice(1, -1), data: plantText(JSON.stringify(first)) },
      { event: 'plant.updated', id: (edited.headers.etag as string).slice(1, -1), data: plantText(JSON.stringify({ ...first, name: 'Edited after the import' })) },
      { event: 'plant.created', id: String(position(read.headers.etag) + 1n), data: plantText(JSON.stringify(second)) },
      { event: 'plant.created', id: expect.stringMatching(/^\d+$/) as unknown, data: plantText(JSON.stringify(later)) },
    ]);
    const positions = events.filter((event) => event.data !== undefined).map((event) => BigInt(event.id as string));
    expect(positions).toEqual(positions.map((_, index) => (positions[0] as bigint) + BigInt(index)));
    // An import is a migration, not a user's create: the subscriber hears of the edit, not of the imported plants.
    expect([storedEvents(app, first.id as number).length, storedEvents(app, second.id as number).length]).toEqual([1, 0]);
  });
});
