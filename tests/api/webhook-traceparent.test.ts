import { aNewPlant } from '../helpers/plants';
import { bearer, postPlant, storedEvents, type TestApp } from '../helpers/test-app';
import { closedPort, eventTypeOf } from '../helpers/webhook-receiver';
import { perTest } from '../helpers/fixtures';
import { sleep } from '../helpers/common';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
// W3C Trace Context level 1, version 00: exactly four lower-case hex fields.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

const { receiver, appWith } = perTest();

const fieldsOf = (header: string | undefined) => {
  const match = TRACEPARENT.exec(header ?? '');
  return match === null ? undefined : { traceId: match[1], spanId: match[2], flags: match[3] };
};
const storedTrace = (app: TestApp, plantId: unknown) => storedEvents(app, BigInt(plantId as number)).map((row) => row.trace_context);

describe('W3C traceparent on webhook deliveries', () => {
  it('when the create came with a valid traceparent, then every attempt carries its trace id with a new span id of its own', async () => {
    const hooks = await receiver({ answer: (_delivery, index) => (index === 0 ? 500 : 200) });
    const app = await appWith(hooks.url);
    const plant = aNewPlant();

    const response = await postPlant(app, plant, { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` });
    const [first, second] = await hooks.waitFor((all) => all.length === 2);

    expect(response.status).toBe(200);
    expect([fieldsOf(first?.traceparent), fieldsOf(second?.traceparent)]).toEqual([
      { traceId: TRACE_ID, spanId: expect.not.stringMatching(`^(${PARENT_ID}|0{16})$`), flags: '01' },
      { traceId: TRACE_ID, spanId: expect.not.stringMatching(`^(${PARENT_ID}|0{16})$`), flags: '01' },
    ]);
    expect(fieldsOf(second?.traceparent)?.spanId).not.toBe(fieldsOf(first?.traceparent)?.spanId);
    expect([first?.verified, second?.verified]).toEqual([true, true]);
    expect(storedTrace(app, plant.id)).toEqual([`${TRACE_ID}-01`]);
  });

  it('when the traceparent is of a later version with more fields, then the delivery sends version 00 with the same trace id and flags', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);

    await postPlant(app, aNewPlant(), { traceparent: `01-${TRACE_ID}-${PARENT_ID}-00-what-comes-next` });
    const [delivery] = await hooks.waitFor((all) => all.length === 1);

    expect(fieldsOf(delivery?.traceparent)).toEqual({ traceId: TRACE_ID, spanId: expect.any(String), flags: '00' });
  });

  it('when the receiver is down at the create, then the delivery after it comes up still carries the trace (it is stored with the event)', async () => {
    const port = await closedPort();
    const app = await appWith(`http://127.0.0.1:${port}/hooks`, { WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms' });

    await postPlant(app, aNewPlant(), { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` });
    await sleep(150);
    const hooks = await receiver({ port });
    const [delivery] = await hooks.waitFor((all) => all.length === 1);

    expect(fieldsOf(delivery?.traceparent)).toMatchObject({ traceId: TRACE_ID, flags: '01' });
  });

  it.each([
    ['no traceparent', {}],
    ['a malformed traceparent', { traceparent: `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01` }],
    ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01` }],
  ])('when the create came with %s, then the delivery carries no traceparent', async (_case, headers: Record<string, string>) => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const plant = aNewPlant();

    const response = await postPlant(app, plant, headers);
    const [delivery] = await hooks.waitFor((all) => all.length === 1);

    expect(response.status).toBe(200);
    expect(delivery).toMatchObject({ verified: true, body: JSON.stringify(plant) });
    expect(delivery?.traceparent).toBeUndefined();
    expect(storedTrace(app, plant.id)).toEqual([null]);
  });

  it('when creates with different traces arrive together, then each delivery carries its own create\'s trace', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url);
    const traced = aNewPlant();
    const other = aNewPlant();
    const untraced = aNewPlant();
    const otherTrace = 'a'.repeat(32);

    await Promise.all([
      postPlant(app, traced, { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }),
      postPlant(app, other, { traceparent: `00-${otherTrace}-${PARENT_ID}-01` }),
      postPlant(app, untraced),
    ]);
    const deliveries = await hooks.waitFor((all) => all.length === 3);

    const traceOf = (plant: Record<string, unknown>) => fieldsOf(deliveries.find((delivery) => delivery.body === JSON.stringify(plant))?.traceparent)?.traceId;
    expect([traceOf(traced), traceOf(other), traceOf(untraced)]).toEqual([TRACE_ID, otherTrace, undefined]);
  });

  it('when a PATCH and a DELETE come with traceparents (WEBHOOK_EVENTS names edits and deletes), then their deliveries carry those trace ids, and an untraced edit none', async () => {
    const hooks = await receiver();
    const app = await appWith(hooks.url, { WEBHOOK_EVENTS: 'plant.updated,plant.deleted' });
    const [edited, removed] = [aNewPlant(), aNewPlant()];
    const [editTrace, deleteTrace] = ['b'.repeat(32), 'c'.repeat(32)];
    await postPlant(app, edited);
    await postPlant(app, removed);

    const patched = await app.request
      .patch(`/plants/${edited.id as number}`)
      .set({ ...bearer(), 'Content-Type': 'application/merge-patch+json', traceparent: `00-${editTrace}-${PARENT_ID}-01` })
      .send('{"name":"Edited with a trace"}');
    const untraced = await app.request.patch(`/plants/${edited.id as number}`).set({ ...bearer(), 'Content-Type': 'application/json' }).send('{"tag":"no trace"}');
    const deleted = await app.request.delete(`/plants/${removed.id as number}`).set({ ...bearer(), traceparent: `00-${deleteTrace}-${PARENT_ID}-00` });
    const deliveries = await hooks.waitFor((all) => all.length === 3);

    expect([patched.status, untraced.status, deleted.status]).toEqual([200, 200, 204]);
    const edit = (traced: boolean) => deliveries.find((delivery) => eventTypeOf(delivery) === 'plant.updated' && delivery.body.includes('"no trace"') !== traced);
    const seen = [edit(true), edit(false), deliveries.find((delivery) => eventTypeOf(delivery) === 'plant.deleted')].map((delivery) => [eventTypeOf(delivery), fieldsOf(delivery?.traceparent), delivery?.verified]);
    expect(seen).toEqual([
      ['plant.updated', { traceId: editTrace, spanId: expect.not.stringMatching(`^(${PARENT_ID}|0{16})$`), flags: '01' }, true],
      ['plant.updated', undefined, true],
      ['plant.deleted', { traceId: deleteTrace, spanId: expect.not.stringMatching(`^(${PARENT_ID}|0{16})$`), flags: '00' }, true],
    ]);
    expect([storedTrace(app, edited.id), storedTrace(app, removed.id)]).toEqual([[`${editTrace}-01`, null], [`${deleteTrace}-00`]]);
  });
});
