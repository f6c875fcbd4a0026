import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../../clients/typescript/src/index';
import { count, follow, plantEvents, positionOf } from '../helpers/client-changes';
import { appForAll } from '../helpers/fixtures';
import { TOKEN } from '../helpers/test-app';

const BIG = 9007199254740993n;

/**
 * A front door to the real service that ends the first change stream once it has passed one event on, the way
 * the service ends a stream: cleanly at shutdown (`end`), or with its last `event: resume` frame to a reader it
 * cut off (`resume`, the frame as docs/api.md gives it). Every other request passes through untouched.
 */
async function endingFront(upstream: string, ending: 'end' | 'resume') {
  const lastEventIds: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    const target = new URL(req.url ?? '/', upstream);
    const isFeed = target.pathname === '/plants/events';
    if (isFeed) lastEventIds.push(req.headers['last-event-id'] as string | undefined);
    const endThis = isFeed && lastEventIds.length === 1;
    const forward = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!endThis) {
        answer.pipe(res);
        return;
      }
      let text = '';
      answer.on('data', (chunk: Buffer) => {
        res.write(chunk);
        text += chunk.toString();
        // An event's id, not the id-only block that starts the stream.
        const id = /^id: (\d+)\ndata: /m.exec(text)?.[1];
        if (id === undefined || !text.endsWith('\n\n')) return;
        if (ending === 'resume') res.write(`event: resume\nid: ${id}\ndata: {"reason":"too_slow"}\n\n`);
        res.end();
        forward.destroy();
      });
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastEventIds,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the TypeScript client when the service ends the change stream', () => {
  const app = appForAll();

  it.each([
    ['ends it cleanly (as at shutdown)', 'end' as const, 100n],
    ['cuts the reader off with event: resume', 'resume' as const, 200n],
  ])('when the service %s, then the client reconnects with Last-Event-ID and gets what followed, once', async (_how, ending, offset) => {
    const front = await endingFront(app.url, ending);
    const writer = createClient({ baseUrl: app.url, token: TOKEN });
    const ids = [BIG + offset, BIG + offset + 1n, BIG + offset + 2n];
    const abort = new AbortController();
    const reader = follow(createClient({ baseUrl: front.url, token: TOKEN }), { signal: abort.signal });
    await reader.until((seen) => count('open')(seen) === 1);

    await writer.createPlant({ id: ids[0] as bigint, name: 'Before the end' });
    await reader.until((seen) => plantEvents(seen).length === 1);
    await writer.createPlant({ id: ids[1] as bigint, name: 'After the end' });
    await writer.updatePlant(ids[0] as bigint, { name: 'Edited after the end' });
    await writer.createPlant({ id: ids[2] as bigint, name: 'After the end' });
    await reader.until((seen) => plantEvents(seen).length === 4);
    abort.abort();
    await reader.done;
    await front.close();

    const summary = reader.events.map((event) => (event.type === 'plant.created' || event.type === 'plant.updated' ? `${event.type} ${event.plant.id} ${event.plant.name}` : event.type));
    expect(summary).toEqual([
      'open',
      `plant.created ${ids[0]} Before the end`,
      'open',
      `plant.created ${ids[1]} After the end`,
      `plant.updated ${ids[0]} Edited after the end`,
      `plant.created ${ids[2]} After the end`,
    ]);
    expect(front.lastEventIds).toEqual([undefined, positionOf(reader.events[1]).toString()]);
  });
});
