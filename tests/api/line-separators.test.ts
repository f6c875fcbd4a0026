import http from 'node:http';
import { EventSource } from 'eventsource';
import { aNewPlant, withTimes } from '../helpers/plants';
import { bearer, postPlant, TOKEN } from '../helpers/test-app';
import { perTest } from '../helpers/fixtures';
import { eventTypeOf } from '../helpers/webhook-receiver';

const { app, appWith, receiver } = perTest();

// What a reader that splits lines the Unicode way (Python's str.splitlines, several SSE libraries) breaks on.
const SEPARATORS = ['\u2028', '\u2029', '\u0085'];
const NAME = 'Line\u2028event: plant.deleted\u2029data: {"id":1}\u0085end';
const TAG = 'a\u2028b\u2029c\u0085d';

/** Which separators appear raw (as their UTF-8 bytes) in `bytes`, by code point. */
const rawSeparators = (bytes: Buffer): string[] =>
  SEPARATORS.filter((separator) => bytes.includes(Buffer.from(separator, 'utf8'))).map((separator) => `U+${separator.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The stream's bytes as they arrive, until `until` holds for them. */
function readRaw(url: string, until: (bytes: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const request = http.get(`${url}/plants/events`, { headers: bearer() }, (response) => {
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        const bytes = Buffer.concat(chunks);
        if (until(bytes)) {
          request.destroy();
          resolve(bytes);
        }
      });
    });
    request.on('error', reject);
    setTimeout(() => {
      request.destroy();
      reject(new Error(`no matching frame within 10 s; received ${Buffer.concat(chunks).toString('utf8')}`));
    }, 10_000).unref();
  });
}

describe('U+2028, U+2029 and U+0085 in a name or tag, on the wire', () => {
  it('when a plant holding them is created, edited and deleted, then no change event carries one raw, and a WHATWG reader gets the exact name and tag', async () => {
    const served = await app();
    const plant = aNewPlant({ name: NAME, tag: TAG });
    const id = plant.id as number;
    // Up to the delete's frame, the last of the three.
    const raw = readRaw(served.url, (bytes) => bytes.toString('utf8').includes(`data: {"id":${id}}\n\n`));
    const parsed: { type: string; data: string }[] = [];
    const source = new EventSource(`${served.url}/plants/events`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, Authorization: `Bearer ${TOKEN}` } }),
    });
    const opened = new Promise((resolve) => source.addEventListener('open', resolve));
    const seen = new Promise<void>((resolve) => {
      for (const type of ['plant.created', 'plant.updated', 'plant.deleted']) {
        source.addEventListener(type, (event) => {
          parsed.push({ type, data: event.data as string });
          if (type === 'plant.deleted') resolve();
        });
      }
    });
    await opened;

    await postPlant(served, plant);
    await served.request
      .patch(`/plants/${id}`)
      .set({ ...bearer(), 'Content-Type': 'application/merge-patch+json' })
      .send(JSON.stringify({ name: `${NAME}\u2028edited` }));
    await served.request.delete(`/plants/${id}`).set(bearer());
    const bytes = await raw;
    await seen;
    source.close();

    expect(rawSeparators(bytes)).toEqual([]);
    expect(parsed.map(({ type, data }) => ({ type, data: JSON.parse(data) as unknown }))).toEqual([
      { type: 'plant.created', data: withTimes({ id, name: NAME, tag: TAG }) },
      { type: 'plant.updated', data: withTimes({ id, name: `${NAME}\u2028edited`, tag: TAG }) },
      { type: 'plant.deleted', data: { id } },
    ]);
  });

  it('when a plant holding them is created and edited, then no webhook body carries one raw, and each verifies and parses to the exact name and tag', async () => {
    const hooks = await receiver();
    const served = await appWith(hooks.url, { WEBHOOK_EVENTS: 'plant.created,plant.updated' });
    const plant = aNewPlant({ name: NAME, tag: TAG });
    const id = plant.id as number;

    await postPlant(served, plant);
    await served.request
      .patch(`/plants/${id}`)
      .set({ ...bearer(), 'Content-Type': 'application/merge-patch+json' })
      .send(JSON.stringify({ tag: `${TAG}\u2029edited` }));
    const deliveries = await hooks.waitFor((all) => all.length === 2);

    // Deliveries are not ordered: each is taken by its type.
    const byType = Object.fromEntries(
      deliveries.map((delivery) => [
        eventTypeOf(delivery),
        { raw: rawSeparators(Buffer.from(delivery.body, 'utf8')), verified: delivery.verified, body: JSON.parse(delivery.body) as unknown },
      ]),
    );
    expect(byType).toEqual({
      'plant.created': { raw: [], verified: true, body: { id, name: NAME, tag: TAG } },
      'plant.updated': { raw: [], verified: true, body: { type: 'plant.updated', data: withTimes({ id, name: NAME, tag: `${TAG}\u2029edited` }) } },
    });
  });
});
