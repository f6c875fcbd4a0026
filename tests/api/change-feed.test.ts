import http from 'node:http';
import { EventSource } from 'eventsource';
import { aNewPlant, uniqueId, plantText } from '../helpers/plants';
import { bearer, postPlant, TOKEN, type TestApp } from '../helpers/test-app';
import { appForAll, perTest, sleep } from '../helpers/fixtures';
import { openStream, type SseEvent, type SseStream } from '../helpers/sse';

const app = appForAll({ EVENTS_HEARTBEAT: '300ms' });
const opened: SseStream[] = [];
afterEach(() => {
  for (const stream of opened.splice(0)) stream.close();
});

async function stream(target: TestApp, path: string, headers: Record<string, string> = {}) {
  const opening = await openStream(target.url, path, { ...bearer(), ...headers });
  opened.push(opening);
  return opening;
}
const patch = (target: TestApp, id: number | string, body: unknown) =>
  target.request.patch(`/plants/${id}`).set({ 'Content-Type': 'application/json', ...bearer() }).send(JSON.stringify(body));
const remove = (target: TestApp, id: number | string) => target.request.delete(`/plants/${id}`).set(bearer());
const about = (id: number | string) => (events: SseEvent[]) => events.filter((event) => event.data?.startsWith(`{"id":${id},`) || event.data === `{"id":${id}}`);

describe('GET /plants/events', () => {
  it('when a plant is created, edited and deleted, then the stream carries three events with positions, exact ids and the plant', async () => {
    const reader = await stream(app, '/plants/events');
    const id = '9007199254740993';

    await postPlant(app, `{"id": ${id}, "name": "Fern", "tag": "shade"}`);
    const edited = await patch(app, id, { tag: null });
    await remove(app, id);
    const events = about(id)(await reader.waitFor((all) => about(id)(all).length === 3));

    expect({ status: reader.status, type: reader.headers['content-type'], cache: reader.headers['cache-control'] }).toEqual({
      status: 200,
      type: 'text/event-stream',
      cache: 'no-store',
    });
    expect(events).toEqual([
      { event: 'plant.created', id: expect.stringMatching(/^\d+$/) as unknown, data: plantText(`{"id":${id},"name":"Fern","tag":"shade"}`) },
      { event: 'plant.updated', id: expect.stringMatching(/^\d+$/) as unknown, data: plantText(`{"id":${id},"name":"Fern"}`) },
      { event: 'plant.deleted', id: expect.stringMatching(/^\d+$/) as unknown, data: `{"id":${id}}` },
    ]);
    const positions = events.map((event) => BigInt(event.id as string));
    expect(positions[1]).toBeGreaterThan(positions[0] as bigint);
    expect(positions[2]).toBeGreaterThan(positions[1] as bigint);
    // The ETag after an event is its position.
    expect(edited.headers.etag).toBe(`"${events[1]?.id as string}"`);
  });

  it('when a reader resumes with Last-Event-ID or ?after=, then it gets exactly the events after that position, once', async () => {
    const first = aNewPlant();
    const second = aNewPlant();
    const live = await stream(app, '/plants/events');
    await postPlant(app, first);
    await postPlant(app, second);
    const [created] = about(first.id as number)(await live.waitFor((all) => about(second.id as number)(all).length === 1));
    live.close();

    const byHeader = await stream(app, '/plants/events', { 'Last-Event-ID': created?.id as string });
    const byQuery = await stream(app, `/plants/events?after=${created?.id as string}`);
    const bothGiven = await stream(app, `/plants/events?after=0`, { 'Last-Event-ID': created?.id as string });
    const third = aNewPlant();
    await postPlant(app, third);

    for (const reader of [byHeader, byQuery, bothGiven]) {
      const events = await reader.waitFor((all) => about(third.id as number)(all).length === 1);
      expect(about(first.id as number)(events)).toEqual([]);
      expect(about(second.id as number)(events)).toHaveLength(1);
      const ids = events.filter((event) => event.id !== undefined).map((event) => BigInt(event.id as string));
      expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('when ?tag= is given, then only changes of plants with that tag come, and an edit that takes one out of the tag', async () => {
    const tag = `feed-${uniqueId()}`;
    const reader = await stream(app, `/plants/events?tag=${tag}`);
    const inside = aNewPlant({ tag });
    const outside = aNewPlant({ tag: 'elsewhere' });

    await postPlant(app, outside);
    await postPlant(app, inside);
    await patch(app, inside.id as number, { tag: 'moved' });
    await patch(app, outside.id as number, { name: 'still elsewhere' });
    const last = aNewPlant({ tag });
    await postPlant(app, last);
    const events = await reader.waitFor((all) => about(last.id as number)(all).length === 1);

    expect(events.filter((event) => event.event !== undefined).map((event) => [event.event, event.data])).toEqual([
      ['plant.created', plantText(`{"id":${inside.id as number},"name":"${inside.name as string}","tag":"${tag}"}`)],
      ['plant.updated', plantText(`{"id":${inside.id as number},"name":"${inside.name as string}","tag":"moved"}`)],
      ['plant.created', plantText(`{"id":${last.id as number},"name":"${last.name as string}","tag":"${tag}"}`)],
    ]);
  });

  it('when nothing changes, then a comment line comes every EVENTS_HEARTBEAT', async () => {
    const reader = await stream(app, '/plants/events?tag=never-used-heartbeat');

    await sleep(1000);

    expect(reader.events.filter((event) => event.comment !== undefined).length).toBeGreaterThanOrEqual(3);
  });

  it('when ?after= is malformed, then it answers 400 40012 naming after; a malformed Last-Event-ID gets a reset, then live', async () => {
    const badQuery = await stream(app, '/plants/events?after=abc');
    const badHeader = await stream(app, '/plants/events', { 'Last-Event-ID': 'not-a-position' });
    const plant = aNewPlant();
    await postPlant(app, plant);
    const events = await badHeader.waitFor((all) => about(plant.id as number)(all).length === 1);

    expect({ status: badQuery.status, body: badQuery.body }).toEqual({
      status: 400,
      body: {
        error: 40012,
        message: 'after: must be a feed position: an integer from 0 to 9223372036854775807 in plain decimal',
        fields: [{ field: 'after', code: 'type', message: 'must be a feed position: an integer from 0 to 9223372036854775807 in plain decimal' }],
      },
    });
    expect(events.filter((event) => event.event !== undefined)[0]).toEqual({
      event: 'reset',
      id: expect.stringMatching(/^\d+$/) as unknown,
      data: '{"reason":"unknown_position"}',
    });
  });

  it('when the position is beyond any written, then a reset comes first', async () => {
    const reader = await stream(app, '/plants/events', { 'Last-Event-ID': '9223372036854775807' });

    const [first] = (await reader.waitFor((all) => all.some((event) => event.event === 'reset'))).filter((event) => event.event !== undefined);

    expect(first).toEqual({ event: 'reset', id: expect.stringMatching(/^\d+$/) as unknown, data: '{"reason":"unknown_position"}' });
  });

  it('when no token is sent, then it answers 401 as GET /plants does', async () => {
    const response = await openStream(app.url, '/plants/events', {});

    expect({ status: response.status, error: (response.body as { error: number }).error }).toEqual({ status: 401, error: 40101 });
  });

  it('when read with the eventsource package (an independent parser) and a fetch that adds the token, then it delivers the events', async () => {
    const plant = aNewPlant({ name: 'Read by EventSource' });
    const received: { type: string; id: string; data: string }[] = [];
    const source = new EventSource(`${app.url}/plants/events`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, Authorization: `Bearer ${TOKEN}` } }),
    });
    const opened = new Promise((resolve) => source.addEventListener('open', resolve));
    const got = new Promise<void>((resolve) => {
      source.addEventListener('plant.created', (event) => {
        received.push({ type: event.type, id: event.lastEventId, data: event.data as string });
        if ((event.data as string).includes(`"id":${plant.id as number},`)) resolve();
      });
    });
    try {
      await opened;
      await postPlant(app, plant);
      await got;
    } finally {
      source.close();
    }

    expect(received.at(-1)).toEqual({ type: 'plant.created', id: expect.stringMatching(/^\d+$/) as unknown, data: plantText(JSON.stringify(plant)) });
  });

  it('when OPTIONS or another method is sent to /plants/events, then Allow lists GET, HEAD, OPTIONS', async () => {
    const options = await app.request.options('/plants/events');
    const post = await app.request.post('/plants/events').set(bearer());

    expect([options.status, options.headers.allow, post.status, post.headers.allow]).toEqual([204, 'GET, HEAD, OPTIONS', 405, 'GET, HEAD, OPTIONS']);
  });
});

describe('GET /plants/events limits and retention', () => {
  const each = perTest();

  it('when a stream starts live, then its first block is an id line alone with the current position, and resuming from it loses nothing', async () => {
    const own = await each.app();
    const created = await postPlant(own, aNewPlant());
    const raw = await new Promise<string>((resolve, reject) => {
      const request = http.get(`${own.url}/plants/events`, { headers: bearer() }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('\n\n')) {
            request.destroy();
            resolve(text);
          }
        });
      });
      request.on('error', reject);
    });
    const plant = aNewPlant();
    await postPlant(own, plant);

    const resumed = await stream(own, '/plants/events', { 'Last-Event-ID': raw.slice('id: '.length, -2) });
    const events = await resumed.waitFor((all) => about(plant.id as number)(all).length === 1);

    expect(created.headers.etag).toMatch(/^"[1-9]\d*"$/);
    expect(raw).toBe(`id: ${(created.headers.etag as string).slice(1, -1)}\n\n`);
    expect(events.filter((event) => event.data !== undefined)).toEqual([
      { event: 'plant.created', id: String(BigInt(raw.slice('id: '.length, -2)) + 1n), data: plantText(JSON.stringify(plant)) },
    ]);
  });

  it('when EVENTS_MAX_STREAMS streams are open, then one more answers 503 50320 with Retry-After', async () => {
    const limited = await each.app({ EVENTS_MAX_STREAMS: '2' });
    await stream(limited, '/plants/events');
    await stream(limited, '/plants/events');

    const refused = await stream(limited, '/plants/events');

    expect({ status: refused.status, retryAfter: refused.headers['retry-after'], error: (refused.body as { error: number }).error }).toEqual({
      status: 503,
      retryAfter: expect.stringMatching(/^\d+$/) as unknown,
      error: 50320,
    });
  });

  it('when 70 streams stay open longer than LOAD_SHED_LAG_MS, then they are not a queue: a create is not shed', async () => {
    const shedding = await each.app({ LOAD_SHED_LAG_MS: '50' });
    await Promise.all(Array.from({ length: 70 }, () => stream(shedding, '/plants/events')));
    await sleep(300);

    const created = await postPlant(shedding, aNewPlant());
    const anotherStream = await stream(shedding, '/plants/events');

    expect([created.status, anotherStream.status]).toEqual([200, 200]);
  });

  it('when a position is older than EVENTS_RETENTION, then one reset event comes and then the live stream', async () => {
    const short = await each.app({ EVENTS_RETENTION: '1s' });
    await postPlant(short, aNewPlant());
    await sleep(2500);

    const reader = await stream(short, '/plants/events?after=0');
    const plant = aNewPlant();
    await postPlant(short, plant);
    const events = await reader.waitFor((all) => about(plant.id as number)(all).length === 1);

    expect(events.filter((event) => event.event !== undefined).map((event) => event.event)).toEqual(['reset', 'plant.created']);
    expect(events.find((event) => event.event === 'reset')?.data).toBe('{"reason":"expired"}');
  });
  it('when a reader stops reading, then it is cut off with a resume event after EVENTS_STREAM_BUFFER events, and resuming loses nothing', async () => {
    const small = await each.app({ EVENTS_STREAM_BUFFER: '5' });
    const slow = await stream(small, '/plants/events');
    slow.response.pause();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const create = (plant: Record<string, unknown>) =>
      new Promise<void>((resolve, reject) => {
        const request = http.request(`${small.url}/plants`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', ...bearer() } }, (response) => {
          response.resume();
          response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`create answered ${response.statusCode}`))));
        });
        request.on('error', reject);
        request.end(JSON.stringify(plant));
      });
    // Long plants fill the socket's buffers sooner: the feed queues only once the kernel's are full.
    const long = 'x'.repeat(180);
    const ids: number[] = [];
    const cutOff = () => small.logs.some((line) => line.msg === 'change stream cut off: the reader fell behind');
    for (let round = 0; round < 100 && !cutOff(); round += 1) {
      const batch = Array.from({ length: 250 }, () => aNewPlant({ name: `${long} ${uniqueId()}`, tag: 't'.repeat(100) }));
      ids.push(...batch.map((plant) => plant.id as number));
      await Promise.all(batch.map(create));
    }
    agent.destroy();
    slow.response.resume();
    await slow.ended;

    expect(cutOff()).toBe(true);
    const named = slow.named();
    const last = named.at(-1);
    expect(last).toEqual({ event: 'resume', id: expect.stringMatching(/^\d+$/) as unknown, data: '{"reason":"too_slow"}' });
    const delivered = named.filter((event) => event.event === 'plant.created');
    expect(last?.id).toBe(delivered.at(-1)?.id);
    const resumed = await stream(small, '/plants/events', { 'Last-Event-ID': last?.id as string });
    // Every create's event, not only the last create's: across workers the creates commit in another order.
    const rest = await resumed.waitFor((all) => delivered.length + all.filter((event) => event.event === 'plant.created').length >= ids.length, 20_000);
    const seen = [...delivered, ...rest.filter((event) => event.event === 'plant.created')].map((event) => BigInt(event.id as string));
    expect(seen.length).toBe(ids.length);
    expect(seen).toEqual(seen.map((_, index) => (seen[0] as bigint) + BigInt(index)));
  }, 90_000);
});
