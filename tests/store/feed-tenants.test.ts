import { EventEmitter } from 'node:events';
import { PlantFeed, type Sink } from '../../src/plants/plant.feed';
import type { ChangeSignal } from '../../src/plants/plant.events';
import type { TenantKey } from '../../src/tenant';
import { captureLogs } from '../helpers/common';
import { describeWith } from '../helpers/optional-services';
import { uniqueId } from '../helpers/plants';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { openPostgresStore, sqlitePlants } from '../helpers/store-subjects';
import { plantRepository } from '../helpers/store-parts';

// The change feed inside tenants (issue 35): a stream sees its own tenant's events, live and on resume, at the
// store's positions. Driven through the feed over a real store of each dialect; run against both.
// Both stores' repositories signal their own commits (`changes`); the PlantParts type does not name it.
type Plants = ReturnType<typeof plantRepository> & { changes: ChangeSignal };
type Subject = { plants: Plants; close: () => Promise<void> };
type Frame = { event?: string; id?: string; data?: string };

const alice = 'alice' as TenantKey;
const bob = 'bob' as TenantKey;

/** A stream's socket as the feed sees it, keeping the frames written to it. */
function collectingSink() {
  const closed = new EventEmitter();
  let text = '';
  const sink: Sink = {
    write: (chunk) => {
      text += chunk;
      return true;
    },
    end: () => closed.emit('close'),
    once: (event, listener) => closed.once(event, listener),
    destroy: () => closed.emit('close'),
  };
  const frames = (): Frame[] =>
    text
      .split('\n\n')
      .filter((block) => block !== '' && !block.startsWith(':'))
      .map((block) => Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])) as Frame);
  return { sink, frames, events: () => frames().filter((frame) => frame.event !== undefined), close: () => closed.emit('close') };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function feedContract(open: () => Promise<Subject>): void {
  let subject: Subject;
  let feed: PlantFeed;
  const sinks: ReturnType<typeof collectingSink>[] = [];

  beforeAll(async () => {
    subject = await open();
    // Catch-up pages of two events: a resume crosses several pages, most of them other tenants' events.
    const feedConfig = { heartbeatMs: 60_000, maxStreams: 1000, bufferEvents: 2 };
    feed = new PlantFeed(subject.plants, subject.plants.changes, feedConfig, captureLogs().logger);
    feed.start();
  });
  afterEach(() => {
    for (const sink of sinks.splice(0)) sink.close();
  });
  afterAll(async () => {
    feed.stop();
    await subject.close();
  });

  const stream = async (tenant: TenantKey, options: { after?: bigint; tag?: string } = {}) => {
    const collected = collectingSink();
    sinks.push(collected);
    await feed.open({ tenant, ...options }, () => collected.sink);
    return collected;
  };
  const create = async (tenant: TenantKey, tag?: string) => {
    const id = BigInt(uniqueId());
    const { version } = await subject.plants.create(tenant, { id, name: `plant ${id}`, ...(tag === undefined ? {} : { tag }) });
    return { id: String(id), pos: String(version) };
  };
  const created = (plant: { id: string; pos: string }) => ({ event: 'plant.created', id: plant.pos, data: expect.stringContaining(`"id":${plant.id},`) as unknown });

  it('when streams are open in two tenants, then each carries its own tenant\'s changes only, live, at the store\'s positions', async () => {
    const [ofAlice, ofBob] = [await stream(alice), await stream(bob)];

    const a1 = await create(alice);
    const b1 = await create(bob);
    const a2 = await create(alice);
    await until(() => ofAlice.events().length === 2 && ofBob.events().length === 1, 'the live events');

    expect({ alice: ofAlice.events(), bob: ofBob.events() }).toEqual({ alice: [created(a1), created(a2)], bob: [created(b1)] });
    expect(BigInt(b1.pos)).toBe(BigInt(a1.pos) + 1n);
  });

  it('when a stream resumes past many of another tenant\'s changes, then it catches up on its own tenant\'s only, then goes on live', async () => {
    const { last: before } = await subject.plants.eventBounds();
    const mine = [];
    for (let round = 0; round < 3; round += 1) {
      mine.push(await create(alice));
      for (let other = 0; other < 4; other += 1) await create(bob);
    }

    const resumed = await stream(alice, { after: before });
    await until(() => resumed.events().length === 3, 'the catch-up');
    const later = await create(alice);
    await create(bob);
    const last = await create(alice);
    await until(() => resumed.events().length === 5, 'the live events after the catch-up');

    expect(resumed.frames()[0]).toEqual({ id: String(before) });
    expect(resumed.events()).toEqual([...mine, later, last].map(created));
  });

  it('when a stream of a tenant resumes with a tag, then the tag filters inside that tenant', async () => {
    const { last: before } = await subject.plants.eventBounds();
    await create(bob, 'shade');
    const shaded = await create(alice, 'shade');
    await create(alice, 'sun');
    await create(bob, 'shade');

    const resumed = await stream(alice, { after: before, tag: 'shade' });
    const live = await create(alice, 'shade');
    await create(bob, 'shade');
    await until(() => resumed.events().length === 2, 'the shaded events');

    expect(resumed.events()).toEqual([created(shaded), created(live)]);
  });

  it('when a hundred tenants each hold a stream, then each receives exactly its own tenant\'s change', async () => {
    const many = Array.from({ length: 100 }, (_, index) => `tenant ${index}` as TenantKey);
    const streams = await Promise.all(many.map((tenant) => stream(tenant)));

    const changes = await Promise.all(many.map((tenant) => create(tenant)));
    await until(() => streams.every((one) => one.events().length >= 1), 'a change on every stream');
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(streams.map((one) => one.events())).toEqual(changes.map((change) => [created(change)]));
  });
}

describe('the change feed in tenants on SQLite', () => {
  feedContract(() => Promise.resolve(sqlitePlants() as Subject));
});

describeWith('postgres', 'the change feed in tenants on PostgreSQL', (server) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(server);
  });
  afterAll(async () => {
    await database.drop();
  });

  feedContract(async () => {
    const store = await openPostgresStore(database.url);
    return { plants: plantRepository(store) as Plants, close: () => store.close() };
  });
});
