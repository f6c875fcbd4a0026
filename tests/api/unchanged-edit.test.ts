import { aNewPlant, plantText } from '../helpers/plants';
import { perTest, sleep } from '../helpers/fixtures';
import { bearer, postPlant, storedPlant, type TestApp } from '../helpers/test-app';
import { openStream } from '../helpers/sse';
import { eventTypeOf } from '../helpers/webhook-receiver';

// A PATCH whose merge leaves the plant as it is writes nothing: no version, no feed event, no webhook.
const { app: startApp, appWith, receiver } = perTest();

const patch = (app: TestApp, id: number, body: string, headers: Record<string, string> = {}) =>
  app.request.patch(`/plants/${id}`).set({ 'Content-Type': 'application/merge-patch+json', ...bearer(), ...headers }).send(body);

// Every event of the feed after `position`, up to and including the one at `last`.
async function eventsBetween(app: TestApp, position: string, last: string) {
  const reader = await openStream(app.url, `/plants/events?after=${position}`, bearer());
  try {
    const events = await reader.waitFor((all) => all.some((event) => event.id === last && event.event !== undefined));
    return events.filter((event) => event.event !== undefined).map((event) => ({ event: event.event, id: event.id, data: event.data }));
  } finally {
    reader.close();
  }
}

describe('PATCH /plants/{id} that changes nothing', () => {
  it('when the patch is empty or repeats the stored values, then it answers 200 with the plant and its ETag, and the feed and webhooks get nothing', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url, { WEBHOOK_EVENTS: 'plant.updated' });
    const plant = aNewPlant({ name: 'Fern', tag: 'shade' });
    const id = plant.id as number;
    const create = await postPlant(app, plant);
    const etag = create.headers.etag as string;
    const bare = aNewPlant({ name: 'Bare', tag: undefined });
    const bareEtag = (await postPlant(app, { id: bare.id, name: 'Bare' })).headers.etag as string;

    const same = [
      await patch(app, id, '{}'),
      await patch(app, id, '{"name":"Fern"}'),
      await patch(app, id, `{"id":${id},"name":"Fern","tag":"shade","colour":"ignored"}`),
      await patch(app, id, '{}', { 'If-Match': etag }),
    ];
    const noTag = await patch(app, bare.id as number, '{"tag":null}');
    const edit = await patch(app, id, '{"name":"Fern B"}');
    await hooks.waitFor((all) => all.length === 1);
    await sleep(500);

    // The plant as stored, its times included: the same text from every edit that changed nothing.
    const body = same[0]?.text;
    expect(body).toEqual(plantText(`{"id":${id},"name":"Fern","tag":"shade"}`));
    expect(same.map((answer) => [answer.status, answer.text, answer.headers.etag, answer.headers['cache-control']])).toEqual(
      Array.from({ length: 4 }, () => [200, body, etag, 'no-store']),
    );
    expect([noTag.status, noTag.text, noTag.headers.etag]).toEqual([200, plantText(`{"id":${bare.id as number},"name":"Bare"}`), bareEtag]);
    const editPosition = (edit.headers.etag as string).slice(1, -1);
    expect(await eventsBetween(app, etag.slice(1, -1), editPosition)).toEqual([
      { event: 'plant.created', id: bareEtag.slice(1, -1), data: plantText(`{"id":${bare.id as number},"name":"Bare"}`) },
      { event: 'plant.updated', id: editPosition, data: plantText(`{"id":${id},"name":"Fern B","tag":"shade"}`) },
    ]);
    expect(hooks.deliveries.map((delivery) => [eventTypeOf(delivery), delivery.body])).toEqual([
      ['plant.updated', expect.stringMatching(new RegExp(`^\\{"type":"plant\\.updated","data":\\{"id":${id},"name":"Fern B","tag":"shade","createdAt":"[^"]+","updatedAt":"[^"]+"\\}\\}$`))],
    ]);
  });

  it('when If-Match is stale, then it answers 412 even though nothing would change; a missing plant is 404', async () => {
    const app = await startApp();
    const plant = aNewPlant();
    const id = plant.id as number;
    await postPlant(app, plant);
    const edited = await patch(app, id, '{"name":"Edited"}');

    const stale = await patch(app, id, '{"name":"Edited"}', { 'If-Match': '"1"' });
    const missing = await patch(app, id + 1, '{}');

    expect([stale.status, stale.body.error, stale.body.message, missing.status, missing.body.error]).toEqual([
      412,
      41201,
      `If-Match: plant ${id} has changed (its ETag is now ${edited.headers.etag as string}); nothing was changed. GET it again, then retry with its new ETag.`,
      404,
      40402,
    ]);
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'Edited', tag: 'indoor' });
  });
});
