import { aNewPlant, uniqueId } from '../helpers/plants';
import { bearer, postPlant, storedEvents, storedPlant, storedRows, type TestApp } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { storedFeed } from '../helpers/plant-writes';

// Subscribed to all three types at a port nothing listens on: the outbox rows stay to be read.
const app = appForAll({
  WEBHOOK_URLS: 'http://127.0.0.1:9/hooks',
  WEBHOOK_SECRET: `whsec_${Buffer.from('batch-plant-test-webhook-secret-3').toString('base64')}`,
  WEBHOOK_EVENTS: 'plant.created,plant.updated,plant.deleted',
  BATCH_BODY_LIMIT: '64kb',
});

const batch = (target: TestApp, body: unknown) =>
  target.request.post('/plants/batch').set({ 'Content-Type': 'application/json', ...bearer() }).send(typeof body === 'string' ? body : JSON.stringify(body));
const etagOf = (response: { headers: Record<string, string> }) => response.headers.etag as string;
// The outbox's events, not their delivery state: the dispatcher keeps retrying the closed port meanwhile.
const written = () => storedEvents(app).map(({ event_id, subscriber, plant_id, payload }) => ({ event_id, subscriber, plant_id, payload }));
const everything = () => ({ rows: storedRows(app), feed: storedFeed(app), outbox: written() });

describe('POST /plants/batch', () => {
  it('when every operation applies, then 200 with each result as alone, in order, events at consecutive positions in that order', async () => {
    const [a, b] = [uniqueId(), uniqueId()];
    const c = aNewPlant({ name: 'Cactus', tag: undefined });
    const d = aNewPlant({ name: 'Dracaena', tag: 'tall' });
    await postPlant(app, c);
    const dEtag = etagOf(await postPlant(app, d));

    const response = await batch(app, {
      operations: [
        { op: 'create', plant: { id: a, name: 'Aloe', tag: 'sun' } },
        { op: 'update', id: a, patch: { name: 'Aloe vera' } },
        { op: 'put', id: b, plant: { name: 'Basil' } },
        { op: 'put', id: c.id, plant: { id: c.id, name: 'Cactus', tag: 'dry' } },
        { op: 'delete', id: d.id, ifMatch: dEtag },
      ],
    });

    const feed = storedFeed(app, [a, b, c.id as number, d.id as number]).slice(-5);
    const etags = feed.map((event) => `"${event.pos}"`);
    expect({ status: response.status, cache: response.headers['cache-control'] }).toEqual({ status: 200, cache: 'no-store' });
    expect(JSON.parse(response.text)).toEqual({
      results: [
        { status: 200, etag: etags[0], plant: { name: 'Aloe', tag: 'sun' } },
        { status: 200, etag: etags[1], plant: { id: a, name: 'Aloe vera', tag: 'sun', createdAt: expect.any(String), updatedAt: expect.any(String) } },
        { status: 201, etag: etags[2], plant: { id: b, name: 'Basil' } },
        { status: 200, etag: etags[3], plant: { id: c.id, name: 'Cactus', tag: 'dry' } },
        { status: 204 },
      ],
    });
    expect(feed.map((event) => [event.kind, event.id])).toEqual([['created', BigInt(a)], ['updated', BigInt(a)], ['created', BigInt(b)], ['updated', BigInt(c.id as number)], ['deleted', BigInt(d.id as number)]]);
    expect(feed.map((event) => event.pos - (feed[0]?.pos ?? 0n))).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect([storedPlant(app, a), storedPlant(app, d.id as number)]).toEqual([{ id: BigInt(a), name: 'Aloe vera', tag: 'sun' }, undefined]);
    expect(storedEvents(app).slice(-5).map((row) => row.plant_id)).toEqual([a, a, b, c.id, d.id].map((id) => BigInt(id as number)));
  });

  it('when the last operation fails (404), then nothing of the batch is applied: store, feed and outbox unchanged, and the error names the operation', async () => {
    const kept = aNewPlant({ name: 'Kept' });
    await postPlant(app, kept);
    const missing = uniqueId();
    const before = everything();

    const response = await batch(app, {
      operations: [
        { op: 'create', plant: { id: uniqueId(), name: 'Never' } },
        { op: 'update', id: kept.id, patch: { name: 'Changed' } },
        { op: 'delete', id: kept.id },
        { op: 'update', id: missing, patch: { name: 'Ghost' } },
      ],
    });

    expect({ status: response.status, body: response.body as unknown }).toEqual({ status: 404, body: { error: 40402, message: `operations[3]: id: no plant has id ${missing}.`, operation: 3 } });
    expect(everything()).toEqual(before);
  });

  it('when a failing batch shares a group commit with other writes, then they apply with consecutive positions and the batch leaves nothing', async () => {
    const [x, y, z] = [aNewPlant(), uniqueId(), aNewPlant()];

    const [first, failed, last] = await Promise.all([
      postPlant(app, x),
      batch(app, { operations: [{ op: 'create', plant: { id: y, name: 'Rolled back' } }, { op: 'delete', id: uniqueId() }] }),
      postPlant(app, z),
    ]);

    const feed = storedFeed(app, [x.id as number, y, z.id as number]);
    expect([first.status, failed.status, last.status]).toEqual([200, 404, 200]);
    // The two creates race on connections of their own: either may arrive first.
    expect(new Set(feed.map((event) => event.id))).toEqual(new Set([BigInt(x.id as number), BigInt(z.id as number)]));
    expect((feed[1]?.pos ?? 0n) - (feed[0]?.pos ?? 0n)).toBe(1n);
    expect(storedPlant(app, y)).toBeUndefined();
  });

  it('when an operation is stale or a create conflicts, then that operation\'s 412 or 400 40007, naming it, and nothing applied', async () => {
    const plant = aNewPlant({ name: 'Fern' });
    const etag = etagOf(await postPlant(app, plant));
    await app.request.patch(`/plants/${plant.id as number}`).set({ 'Content-Type': 'application/json', ...bearer() }).send('{"name":"Fern 2"}');
    const before = everything();

    const stale = await batch(app, { operations: [{ op: 'create', plant: { id: uniqueId(), name: 'X' } }, { op: 'delete', id: plant.id, ifMatch: etag }] });
    const conflict = await batch(app, { operations: [{ op: 'create', plant: { id: plant.id, name: 'Other' } }] });

    expect([stale.status, (stale.body as { error: number }).error, (stale.body as { operation: number }).operation]).toEqual([412, 41201, 1]);
    expect([conflict.status, (conflict.body as { error: number }).error, (conflict.body as { operation: number }).operation]).toEqual([400, 40007, 0]);
    expect(everything()).toEqual(before);
  });

  it('when an operation breaks a field rule, then 400 40006 with fields naming operations[i]…, and nothing applied', async () => {
    const id = uniqueId();

    const response = await batch(app, { operations: [{ op: 'create', plant: { id, name: 'Fine' } }, { op: 'put', id: uniqueId(), plant: { name: ' ' } }] });

    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 400,
      body: {
        error: 40006,
        message: 'operations[1].plant.name: must have at least one non-whitespace character',
        operation: 1,
        fields: [{ field: 'operations[1].plant.name', code: 'blank', message: 'must have at least one non-whitespace character' }],
      },
    });
    expect(storedPlant(app, id)).toBeUndefined();
  });

  it('when the body is not a batch, then 400 40050; more than 1000 operations, 400 40051', async () => {
    const answers = await Promise.all([
      batch(app, {}),
      batch(app, { operations: [] }),
      batch(app, { operations: [{ op: 'upsert', id: 1 }] }),
      batch(app, { operations: Array.from({ length: 1001 }, () => ({ op: 'delete', id: 1 })) }),
    ]);

    expect(answers.map((answer): unknown[] => [answer.status, answer.body as unknown])).toEqual([
      [400, { error: 40050, message: 'operations: must be an array of 1 to 1000 operations', fields: [{ field: 'operations', code: 'required', message: 'must be an array of 1 to 1000 operations' }] }],
      [400, { error: 40050, message: 'operations: must hold 1 to 1000 operations', fields: [{ field: 'operations', code: 'too_short', message: 'must hold 1 to 1000 operations' }] }],
      [400, { error: 40050, message: 'operations[0].op: must be one of create, update, put, delete', operation: 0, fields: [{ field: 'operations[0].op', code: 'unknown_value', message: 'must be one of create, update, put, delete' }] }],
      [400, { error: 40051, message: 'operations: holds 1001 operations; a batch holds at most 1000: split it', fields: [{ field: 'operations', code: 'out_of_range', message: 'holds 1001 operations; a batch holds at most 1000: split it' }] }],
    ]);
  });

  it('when the body is over BODY_LIMIT but within BATCH_BODY_LIMIT, then it applies; over BATCH_BODY_LIMIT, 400 40005', async () => {
    const plants = Array.from({ length: 200 }, () => ({ op: 'create', plant: { id: uniqueId(), name: 'x'.repeat(100) } }));
    const big = Array.from({ length: 1000 }, () => ({ op: 'create', plant: { id: uniqueId(), name: 'y'.repeat(100) } }));

    const within = await batch(app, { operations: plants });
    const over = await batch(app, { operations: big });

    expect(JSON.stringify({ operations: plants }).length).toBeGreaterThan(16 * 1024);
    expect([within.status, over.status, (over.body as { error: number }).error]).toEqual([200, 400, 40005]);
  });

  it('when a create and an update of the same id come in one batch, then the update sees the create; GET /plants/batch is a 405', async () => {
    const id = uniqueId();

    const response = await batch(app, { operations: [{ op: 'create', plant: { id, name: 'New' } }, { op: 'put', id, plant: { name: 'Newer', tag: 't' }, ifMatch: '*' }] });
    const get = await app.request.get('/plants/batch').set(bearer());

    expect([response.status, (JSON.parse(response.text) as { results: { status: number }[] }).results.map((result) => result.status)]).toEqual([200, [200, 200]]);
    expect(storedPlant(app, id)).toEqual({ id: BigInt(id), name: 'Newer', tag: 't' });
    expect([get.status, get.headers.allow]).toEqual([405, 'POST, OPTIONS']);
  });
});

describe('POST /plants/batch against the rate limit', () => {
  const limited = appForAll({ RATE_LIMIT_PER_MINUTE: '10' });
  const creates = (count: number) => ({ operations: Array.from({ length: count }, () => ({ op: 'create', plant: { id: uniqueId(), name: 'Counted' } })) });

  it('when batches count as their operations, then the limit is reached by operations: a batch past it is a 429 that writes nothing', async () => {
    const first = await batch(limited, creates(5));
    const second = await batch(limited, creates(5));
    const over = creates(1);
    const third = await batch(limited, over);

    expect([first.status, second.status, third.status, (third.body as { error: number }).error]).toEqual([200, 200, 429, 42901]);
    expect(third.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(storedPlant(limited, over.operations[0]?.plant.id as number)).toBeUndefined();
  });
});

describe('POST /plants/batch larger than the limit', () => {
  const limited = appForAll({ RATE_LIMIT_PER_MINUTE: '10' });

  it('when one batch holds more operations than the limit leaves, then 429 42901 with Retry-After, and nothing written', async () => {
    const id = uniqueId();

    const response = await batch(limited, { operations: Array.from({ length: 11 }, (_, index) => ({ op: 'create', plant: { id: id + index, name: 'Too many' } })) });

    expect({ status: response.status, error: (response.body as { error: number }).error, retry: response.headers['retry-after'] }).toEqual({ status: 429, error: 42901, retry: expect.stringMatching(/^[1-9][0-9]*$/) });
    expect(storedPlant(limited, id)).toBeUndefined();
  });
});
