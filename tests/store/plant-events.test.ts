import { SHARED_TENANT } from '../../src/tenant';
import type { ChangeEvent } from '../../src/plants/plant.events';
import type { PostgresStore } from '../../src/store/store.postgres';
import { plantRepository } from '../helpers/store-parts';
import { describeWith } from '../helpers/optional-services';
import { uniqueId, withTimes } from '../helpers/plants';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { openPostgresStore, sqlitePlants, type PlantsSubject } from '../helpers/store-subjects';

// The change events each store writes with its changes: one per create, edit and delete, in the same
// transaction, at positions that only grow; run against both stores.
const withoutTime = (events: ChangeEvent[]) => events.map(({ at: _at, ...event }) => event);

function eventsContract(open: () => Promise<PlantsSubject>): void {
  let subject: PlantsSubject;
  beforeAll(async () => {
    subject = await open();
  });
  afterAll(async () => {
    await subject.close();
  });

  it('when a plant is created, edited twice and deleted in one turn, then four events follow in that order and versions are their positions', async () => {
    const id = BigInt(uniqueId());
    const { last } = await subject.plants.eventBounds();

    const [created, renamed, untagged, deleted, missing] = await Promise.all([
      subject.plants.create(SHARED_TENANT, { id, name: 'Fern', tag: 'shade' }),
      subject.plants.update(SHARED_TENANT, id, { name: 'Boston fern' }),
      subject.plants.update(SHARED_TENANT, id, { tag: null }),
      subject.plants.delete(SHARED_TENANT, id),
      subject.plants.update(SHARED_TENANT, id, { name: 'gone' }),
    ]);
    const events = await subject.plants.readEvents(last, 100);

    expect({ created, renamed, untagged, deleted, missing }).toEqual({
      created: { outcome: 'created', stored: withTimes({ id, name: 'Fern', tag: 'shade' }), version: last + 1n },
      renamed: { outcome: 'updated', stored: withTimes({ id, name: 'Boston fern', tag: 'shade' }), version: last + 2n },
      untagged: { outcome: 'updated', stored: withTimes({ id, name: 'Boston fern' }), version: last + 3n },
      deleted: { outcome: 'deleted' },
      missing: { outcome: 'missing' },
    });
    expect(withoutTime(events)).toEqual([
      withTimes({ tenant: SHARED_TENANT, pos: last + 1n, kind: 'created', id, name: 'Fern', tag: 'shade' }),
      withTimes({ tenant: SHARED_TENANT, pos: last + 2n, kind: 'updated', id, name: 'Boston fern', tag: 'shade', prevName: 'Fern', prevTag: 'shade' }),
      withTimes({ tenant: SHARED_TENANT, pos: last + 3n, kind: 'updated', id, name: 'Boston fern', prevName: 'Boston fern', prevTag: 'shade' }),
      { tenant: SHARED_TENANT, pos: last + 4n, kind: 'deleted', id, name: 'Boston fern' },
    ]);
    expect(await subject.plants.eventBounds()).toEqual(expect.objectContaining({ last: last + 4n }));
  });

  it('when an edit or delete names a version that is not current, then it is stale and nothing changes or is written', async () => {
    const id = BigInt(uniqueId());
    const { version } = await subject.plants.create(SHARED_TENANT, { id, name: 'Aloe' });
    const { last } = await subject.plants.eventBounds();

    const outcomes = await Promise.all([
      subject.plants.update(SHARED_TENANT, id, { name: 'stale' }, [version - 1n]),
      subject.plants.delete(SHARED_TENANT, id, []),
      subject.plants.update(SHARED_TENANT, id, { name: 'Aloe vera' }, [version + 100n, version]),
    ]);

    expect(outcomes).toEqual([{ outcome: 'stale', version }, { outcome: 'stale', version }, { outcome: 'updated', stored: withTimes({ id, name: 'Aloe vera' }), version: last + 1n }]);
    expect(withoutTime(await subject.plants.readEvents(last, 100))).toEqual([withTimes({ tenant: SHARED_TENANT, pos: last + 1n, kind: 'updated', id, name: 'Aloe vera', prevName: 'Aloe' })]);
  });

  it('when a create is replayed or a missing plant deleted, then no event is written', async () => {
    const id = BigInt(uniqueId());
    await subject.plants.create(SHARED_TENANT, { id, name: 'Cactus' });
    const { last } = await subject.plants.eventBounds();

    await Promise.all([subject.plants.create(SHARED_TENANT, { id, name: 'Cactus' }), subject.plants.delete(SHARED_TENANT, id + 1n)]);

    expect(await subject.plants.readEvents(last, 100)).toEqual([]);
  });

  it('when events are older than the cutoff, then pruning removes them from the oldest and the bounds move', async () => {
    await subject.plants.create(SHARED_TENANT, { id: BigInt(uniqueId()), name: 'old' });
    const { last } = await subject.plants.eventBounds();

    let removed = 0;
    for (let count = -1; count !== 0; ) removed += count = await subject.plants.pruneEvents(Date.now() + 1000, 2);
    await subject.plants.create(SHARED_TENANT, { id: BigInt(uniqueId()), name: 'new' });

    expect(removed).toBeGreaterThan(0);
    expect(await subject.plants.eventBounds()).toEqual({ oldest: last + 1n, last: last + 1n });
  });
}

describe('change events on SQLite', () => {
  eventsContract(() => Promise.resolve(sqlitePlants()));
});

describeWith('postgres', 'change events on PostgreSQL', (server) => {
  const stores: PostgresStore[] = [];
  let database: TestDatabase;
  const openStore = async (url: string) => {
    const store = await openPostgresStore(url);
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    database = await createTestDatabase(server);
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await database.drop();
  });

  eventsContract(async () => {
    const store = await openStore(database.url);
    return { plants: plantRepository(store), close: () => Promise.resolve() };
  });

  it('when two replicas commit concurrently, then a reader polling all along sees every event once, in position order, with no gap', async () => {
    const [a, b] = await Promise.all([openStore(database.url), openStore(database.url)]);
    const { last: start } = await plantRepository(a).eventBounds();
    const seen: ChangeEvent[] = [];
    let writing = true;
    // The reader resumes after the last position it saw, as a stream does: an event that became visible after
    // a later one would be skipped for good.
    const reader = (async () => {
      let after = start;
      while (writing || seen.length < 800) {
        // Whether every write had committed before this read began: only then does an empty read mean the end.
        const finished = !writing;
        const events = await plantRepository(a).readEvents(after, 50);
        seen.push(...events);
        after = events.at(-1)?.pos ?? after;
        if (finished && events.length === 0) break;
      }
    })();

    // 2 replicas × 20 rounds × 20 creates, each replica's batches racing the other's.
    for (let round = 0; round < 20; round += 1) {
      await Promise.all(
        [a, b].flatMap((store) => Array.from({ length: 20 }, () => plantRepository(store).create(SHARED_TENANT, { id: BigInt(uniqueId()), name: `round ${round}` }))),
      );
    }
    writing = false;
    await reader;

    const positions = seen.map((event) => event.pos);
    expect(positions).toEqual(Array.from({ length: 800 }, (_, index) => start + BigInt(index) + 1n));
    expect(new Set(seen.map((event) => event.id)).size).toBe(800);
  });
});
