import { appForAll, perTest, sleep } from '../helpers/fixtures';
import { uniqueId } from '../helpers/plants';
import { openStream, type SseEvent, type SseStream } from '../helpers/sse';
import { actingAs, as, tenantEnv, tenantTokenFileForAll, type Caller } from '../helpers/tenant-tokens';
import type { TestApp } from '../helpers/test-app';

// GET /plants/events for alice and bob, who write plants under the same ids: live, resumed (Last-Event-ID and
// ?after=, from a position of either tenant), reset (unknown and expired positions) and filtered by tag and q,
// each stream carries its own tenant's changes only. Names say whose plant an event is about.
const tokens = tenantTokenFileForAll();
const app = appForAll(() => tenantEnv(tokens, { EVENTS_HEARTBEAT: '300ms' }));
const each = perTest();

const opened: SseStream[] = [];
afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
});

type Headers = Record<string, string>;
async function stream(target: TestApp, path: string, headers: Headers): Promise<SseStream> {
  const opening = await openStream(target.url, path, headers);
  opened.push(opening);
  return opening;
}
const json = { 'Content-Type': 'application/json' };
const create = (target: TestApp, who: Headers, plant: Record<string, unknown>) =>
  target.request.post('/plants').set({ ...json, ...who }).send(JSON.stringify(plant));
const patch = (target: TestApp, who: Headers, id: number, body: unknown) => target.request.patch(`/plants/${id}`).set({ ...json, ...who }).send(JSON.stringify(body));
const remove = (target: TestApp, who: Headers, id: number) => target.request.delete(`/plants/${id}`).set(who);

/** Each dispatched event as [type, the plant's id, name or undefined]. */
const changes = (events: SseEvent[]) =>
  events
    .filter((event) => event.data !== undefined && event.event !== 'reset')
    .map((event) => {
      const data = JSON.parse(event.data as string) as { id: number; name?: string };
      return [event.event, data.id, data.name];
    });
const marker = (events: SseEvent[], name: string) => events.some((event) => event.data?.includes(`"name":"${name}"`));

/** Alice and bob each create, edit and delete a plant under one shared id, alice's changes first. */
async function bothWrite(target: TestApp, id: number): Promise<void> {
  for (const caller of ['alice', 'bob'] as const) expect((await create(target, as(caller), { id, name: `Fern of ${caller}`, tag: 'shared' })).status).toBe(200);
  for (const caller of ['bob', 'alice'] as const) expect((await patch(target, as(caller), id, { name: `Fern edited by ${caller}` })).status).toBe(200);
  for (const caller of ['alice', 'bob'] as const) expect((await remove(target, as(caller), id)).status).toBe(204);
}
const ownChanges = (caller: Caller, id: number) => [
  ['plant.created', id, `Fern of ${caller}`],
  ['plant.updated', id, `Fern edited by ${caller}`],
  ['plant.deleted', id, undefined],
];
/** Creates `name` in `caller`'s tenant: the last event a stream waits for. */
const last = async (target: TestApp, caller: Caller, name: string) => expect((await create(target, as(caller), { id: uniqueId(), name })).status).toBe(200);

describe('the change feed in two tenants', () => {
  it('when both write under the same id, then each live stream carries exactly its own tenant\'s changes', async () => {
    const id = uniqueId();
    const readers = { alice: await stream(app, '/plants/events', as('alice')), bob: await stream(app, '/plants/events', as('bob')) };

    await bothWrite(app, id);
    await last(app, 'alice', `end ${id}`);
    await last(app, 'bob', `end ${id}`);
    const seen = { alice: await readers.alice.waitFor((all) => marker(all, `end ${id}`)), bob: await readers.bob.waitFor((all) => marker(all, `end ${id}`)) };
    await sleep(300);

    for (const caller of ['alice', 'bob'] as const) {
      expect(changes(seen[caller]).filter(([, about]) => about === id)).toEqual(ownChanges(caller, id));
    }
  });

  it.each([
    ['Last-Event-ID after its own first change', 'alice', 'header'],
    ['?after= a position of the other tenant', 'bob', 'query'],
  ] as const)('when alice resumes with %s, then she gets exactly her changes after it, none of bob\'s', async (_what, whose, how) => {
    const id = uniqueId();
    const live = { alice: await stream(app, '/plants/events', as('alice')), bob: await stream(app, '/plants/events', as('bob')) };
    await create(app, as(whose), { id: uniqueId(), name: `start ${id}` });
    const start = (await live[whose].waitFor((all) => marker(all, `start ${id}`))).find((event) => event.data?.includes(`start ${id}`))?.id as string;
    await bothWrite(app, id);

    const resumed = await stream(app, how === 'header' ? '/plants/events' : `/plants/events?after=${start}`, { ...as('alice'), ...(how === 'header' ? { 'Last-Event-ID': start } : {}) });
    await last(app, 'bob', `end ${id}`);
    await last(app, 'alice', `end ${id}`);
    const events = await resumed.waitFor((all) => marker(all, `end ${id}`));

    expect(events.some((event) => event.event === 'reset')).toBe(false);
    expect(changes(events).filter(([, about]) => about === id)).toEqual(ownChanges('alice', id));
    expect(changes(events).some(([, , name]) => typeof name === 'string' && name.includes('bob'))).toBe(false);
  });

  it('when a stream resumes from before any change (?after=0), then it replays only its own tenant\'s history', async () => {
    const id = uniqueId();
    await bothWrite(app, id);

    const replayed = await stream(app, '/plants/events?after=0', as('bob'));
    await last(app, 'bob', `end ${id}`);
    const events = await replayed.waitFor((all) => marker(all, `end ${id}`));

    expect(changes(events).filter(([, about]) => about === id)).toEqual(ownChanges('bob', id));
    expect(changes(events).some(([, , name]) => typeof name === 'string' && /alice/.test(name))).toBe(false);
  });

  it('when a stream resumes from a position never written, then it resets (unknown_position) and then carries only its own changes', async () => {
    const id = uniqueId();

    const reader = await stream(app, '/plants/events', { ...as('alice'), 'Last-Event-ID': '9223372036854775807' });
    await bothWrite(app, id);
    await last(app, 'alice', `end ${id}`);
    const events = await reader.waitFor((all) => marker(all, `end ${id}`));

    expect(events.filter((event) => event.event !== undefined)[0]).toEqual({ event: 'reset', id: expect.stringMatching(/^\d+$/) as unknown, data: '{"reason":"unknown_position"}' });
    expect(changes(events).filter(([, about]) => about === id)).toEqual(ownChanges('alice', id));
  });

  it('when a position has expired, then the reset comes and the live stream after it carries only its own changes', async () => {
    const short = await each.app(tenantEnv(tokens, { EVENTS_RETENTION: '1s' }));
    await create(short, as('bob'), { id: uniqueId(), name: 'old' });
    await sleep(2500);
    const id = uniqueId();

    const reader = await stream(short, '/plants/events?after=0', as('alice'));
    await bothWrite(short, id);
    await last(short, 'alice', `end ${id}`);
    const events = await reader.waitFor((all) => marker(all, `end ${id}`));

    expect(events.find((event) => event.event === 'reset')?.data).toBe('{"reason":"expired"}');
    expect(changes(events).filter(([, about]) => about === id)).toEqual(ownChanges('alice', id));
  });

  it('when streams filter by tag and q, then a matching change of the other tenant never comes', async () => {
    const id = uniqueId();
    const tag = `feed-${id}`;
    const readers = {
      alice: await stream(app, `/plants/events?tag=${tag}&q=fern`, as('alice')),
      bob: await stream(app, `/plants/events?q=fern%20of`, as('bob')),
    };

    for (const caller of ['bob', 'alice'] as const) await create(app, as(caller), { id, name: `Fern of ${caller}`, tag });
    for (const caller of ['alice', 'bob'] as const) await patch(app, as(caller), id, { name: `Fern of ${caller}, again` });
    await create(app, as('alice'), { id: uniqueId(), name: `Fern end ${id}`, tag });
    await create(app, as('bob'), { id: uniqueId(), name: `Fern of end ${id}` });
    const seen = { alice: await readers.alice.waitFor((all) => marker(all, `Fern end ${id}`)), bob: await readers.bob.waitFor((all) => marker(all, `Fern of end ${id}`)) };

    for (const caller of ['alice', 'bob'] as const) {
      expect(changes(seen[caller]).filter(([, about]) => about === id)).toEqual([
        ['plant.created', id, `Fern of ${caller}`],
        ['plant.updated', id, `Fern of ${caller}, again`],
      ]);
    }
  });

  it("when a list's Feed-Position starts a stream, then it carries the tenant's changes since the page and none of the other's", async () => {
    const id = uniqueId();
    const page = await app.request.get('/plants?limit=1').set(as('bob'));
    const position = page.headers['feed-position'] as string;
    await bothWrite(app, id);

    const reader = await stream(app, `/plants/events?after=${position}`, as('bob'));
    await last(app, 'bob', `end ${id}`);
    const events = await reader.waitFor((all) => marker(all, `end ${id}`));

    expect(changes(events).filter(([, about]) => about === id)).toEqual(ownChanges('bob', id));
  });

  it('when the operator streams acting in bob, then it carries bob\'s changes only', async () => {
    const id = uniqueId();
    const reader = await stream(app, '/plants/events', actingAs('bob'));

    await bothWrite(app, id);
    await last(app, 'bob', `end ${id}`);
    const events = await reader.waitFor((all) => marker(all, `end ${id}`));

    expect(changes(events).filter(([, about]) => about === id)).toEqual(ownChanges('bob', id));
  });
});
