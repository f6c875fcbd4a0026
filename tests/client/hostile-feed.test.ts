import type http from 'node:http';
import { createClient, PlantStoreError, type ChangeEvent } from '../../clients/typescript/src/index';
import { hostileServer, type HostileServer } from './hostile-server';

const TOKEN = 'secret-token';

/** Reads changes() until it ends or `ms` pass (then aborts): the events, how it ended, and when. */
async function readFor(origin: string, ms: number) {
  const client = createClient({ baseUrl: origin, token: TOKEN });
  const events: ChangeEvent[] = [];
  const start = Date.now();
  try {
    for await (const event of client.changes({ signal: AbortSignal.timeout(ms) })) events.push(event);
    return { events, ended: 'quietly', error: undefined, afterMs: Date.now() - start };
  } catch (error) {
    return { events, ended: 'with an error', error, afterMs: Date.now() - start };
  }
}

/** A stream that sends these blocks and then stays open. */
const stream = (blocks: string[]) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  res.write(blocks.join(''));
};

const created = (position: string, id = '1') => `event: plant.created\nid: ${position}\ndata: {"id":${id},"name":"Fern"}\n\n`;

describe('the TypeScript client\'s change feed against a hostile server', () => {
  let server: HostileServer | undefined;

  afterEach(async () => {
    await server?.close();
  });

  it.each([
    ['10^9 seconds', '1000000000'],
    ['a date in 2090', 'Sun, 01 Jan 2090 00:00:00 GMT'],
  ])('when every connection is refused with 503 and Retry-After %s, then it waits instead of retrying every millisecond, and an abort ends the wait', async (_kind, retryAfter) => {
    server = await hostileServer((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': retryAfter });
      res.end('{"error":50320,"message":"too many streams"}');
    });

    const read = await readFor(server.origin, 2000);

    expect({ ended: read.ended, requests: server.seen.length }).toEqual({ ended: 'quietly', requests: 1 });
    expect(read.afterMs).toBeLessThan(2500);
  });

  it('when every connection is refused with 429 and Retry-After: 0, then it still waits a growing backoff between tries', async () => {
    server = await hostileServer((_req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '0' });
      res.end('{"error":42901,"message":"slow down"}');
    });

    await readFor(server.origin, 2000);

    expect(server.seen.length).toBeGreaterThanOrEqual(2);
    expect(server.seen.length).toBeLessThanOrEqual(12);
  });

  it.each([
    ['an event', ['id: 5\n\n', created('7🌿')]],
    ['the first block', ['id: 7🌿\n\n', created('8')]],
    ['an event, as a number past int64', ['id: 5\n\n', created('9223372036854775808')]],
  ])('when %s has an id that is not a position, then the iteration ends with a PlantStoreError naming it', async (_kind, blocks) => {
    server = await hostileServer(stream(blocks));

    const read = await readFor(server.origin, 2000);

    expect(read.ended).toBe('with an error');
    expect(read.error).toBeInstanceOf(PlantStoreError);
    expect((read.error as PlantStoreError).message).toMatch(/not a position/);
    expect(server.seen.length).toBe(1);
  });

  it('when a change event has an id past int64, then it is refused like any id the client cannot hold', async () => {
    server = await hostileServer(stream(['id: 5\n\n', created('6', '1e400')]));

    const read = await readFor(server.origin, 2000);

    expect(read.events).toEqual([{ type: 'open' }]);
    expect(read.error).toBeInstanceOf(PlantStoreError);
  });

  it.each([
    ['goes back', ['id: 10\n\n', created('11'), created('9')]],
    ['repeats', ['id: 10\n\n', created('11'), created('11')]],
    ['starts before the position resumed from', ['id: 10\n\n', created('11'), 'event: resume\nid: 11\ndata: {"reason":"too_slow"}\n\n']],
  ])('when a change position %s, then the iteration ends with a PlantStoreError after the events before it', async (_kind, blocks) => {
    // A second connection (the resume) starts at position 3: behind what was read.
    server = await hostileServer((req, res) => stream(req.headers['last-event-id'] === undefined ? blocks : ['id: 3\n\n', created('4')])(req, res));

    const read = await readFor(server.origin, 2000);

    expect(read.events.map((event) => event.type)).toEqual(['open', 'plant.created']);
    expect(read.error).toBeInstanceOf(PlantStoreError);
    expect((read.error as PlantStoreError).message).toMatch(/positions only grow/);
  });

  it('when a reset gives a lower position, then the feed goes on from it (a reset is where continuity breaks)', async () => {
    server = await hostileServer(stream(['id: 10\n\n', created('11'), 'event: reset\nid: 3\ndata: {"reason":"unknown_position"}\n\n', created('4')]));

    const read = await readFor(server.origin, 1000);

    expect(read.ended).toBe('quietly');
    expect(read.events.map((event) => ('position' in event ? `${event.type} ${event.position}` : event.type))).toEqual(['open', 'plant.created 11', 'reset 3', 'plant.created 4']);
  });

  it('when a stream sends 20 MB with no end of event, then the iteration ends with a PlantStoreError', async () => {
    server = await hostileServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('id: 5\n\ndata: ');
      for (let i = 0; i < 320; i += 1) res.write('a'.repeat(64 * 1024));
    });

    const read = await readFor(server.origin, 5000);

    expect(read.error).toBeInstanceOf(PlantStoreError);
    expect((read.error as PlantStoreError).message).toMatch(/more than 8388608 bytes without ending an event/);
  });
});
