import { aNewPlant, TIME } from '../helpers/plants';
import { perTest } from '../helpers/fixtures';
import { bearer, postPlant, type TestApp } from '../helpers/test-app';
import { sleep } from '../helpers/common';
import { eventTypeOf } from '../helpers/webhook-receiver';

const { receiver, appWith } = perTest();

const patch = (app: TestApp, id: number | string, body: unknown) =>
  app.request.patch(`/plants/${id}`).set({ 'Content-Type': 'application/json', ...bearer() }).send(JSON.stringify(body));
const remove = (app: TestApp, id: number | string) => app.request.delete(`/plants/${id}`).set(bearer());

// A time inside a regular expression: TIME without its anchors.
const TIME_TEXT = TIME.source.slice(1, -1);

describe('webhooks for edits and deletes (WEBHOOK_EVENTS)', () => {
  it('when WEBHOOK_EVENTS names all three types, then a create, an edit and a delete are each delivered, signed, saying their type', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url, { WEBHOOK_EVENTS: 'plant.created,plant.updated,plant.deleted' });
    const id = '9007199254740993';

    await postPlant(app, `{"id": ${id}, "name": "Fern", "tag": "shade"}`);
    await patch(app, id, { name: 'Fern "B"', tag: null });
    await remove(app, id);
    await hooks.waitFor((all) => all.length === 3);
    await sleep(300);

    const byType = Object.fromEntries(hooks.deliveries.map((delivery) => [eventTypeOf(delivery), { body: delivery.body, verified: delivery.verified }]));
    expect(hooks.deliveries).toHaveLength(3);
    expect(byType).toEqual({
      'plant.created': { body: `{"id":${id},"name":"Fern","tag":"shade"}`, verified: true },
      'plant.updated': { body: expect.stringMatching(new RegExp(`^\\{"type":"plant\\.updated","data":\\{"id":${id},"name":"Fern \\\\"B\\\\"","createdAt":"${TIME_TEXT}","updatedAt":"${TIME_TEXT}"\\}\\}$`)), verified: true },
      'plant.deleted': { body: `{"type":"plant.deleted","data":{"id":${id}}}`, verified: true },
    });
  });

  it('when WEBHOOK_EVENTS is left at its default, then only creates are delivered, as plant.created', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const plant = aNewPlant();

    await postPlant(app, plant);
    await patch(app, plant.id as number, { name: 'renamed' });
    await remove(app, plant.id as number);
    await hooks.waitFor((all) => all.length === 1);
    await sleep(500);

    expect(hooks.deliveries.map((delivery) => [eventTypeOf(delivery), delivery.body])).toEqual([['plant.created', JSON.stringify(plant)]]);
  });

  it('when a stale edit or a delete of a missing plant is refused, then nothing is delivered for it', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url, { WEBHOOK_EVENTS: 'plant.updated,plant.deleted' });
    const plant = aNewPlant();
    await postPlant(app, plant);

    const stale = await app.request
      .patch(`/plants/${plant.id as number}`)
      .set({ 'Content-Type': 'application/json', 'If-Match': '"999999"', ...bearer() })
      .send('{"name":"stale"}');
    const missing = await remove(app, (plant.id as number) + 1);
    await sleep(700);

    expect([stale.status, missing.status, hooks.deliveries.length]).toEqual([412, 404, 0]);
  });
});
