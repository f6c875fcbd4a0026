import { loadConfig, type Config } from '../../src/config';
import type { PlantEventLog } from '../../src/plants/plant.events';
import { etagOf } from '../../src/plants/plant.etags';
import { postgresIdempotencyKeys } from '../../src/plants/plant.idempotency-keys.postgres';
import type { KeepAnswer, PlantRepository } from '../../src/plants/plant.repository';
import { RESOURCES } from '../../src/resources';
import { createStore } from '../../src/store';
import type { PostgresStore } from '../../src/store/store.postgres';
import type { PostgresPlantRepository } from '../../src/plants/plant.repository.postgres';
import { SHARED_TENANT, type TenantKey } from '../../src/tenant';
import { captureLogs } from '../helpers/common';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, runSql, type TestDatabase } from '../helpers/postgres';
import { uniqueId } from '../helpers/plants';
import { plantRepository } from '../helpers/store-parts';

// Two tenants on one PostgreSQL store, driven through the repository: the same ids, tags and names in each, and
// neither ever reads, counts, changes or answers the other's plant (src/plants/*.postgres.ts, migrations 015–017).

const ALICE = 'alice' as TenantKey;
const BOB = 'bob' as TenantKey;
const configOf = (url: string, tenants?: Config['tenants']): Config => ({ ...loadConfig({ DATABASE_URL: url, AUTH_TOKENS: 'x'.repeat(32) }), tenants });
const TENANTS_ON = { claim: 'sub', perTenantPerMinute: 0 };

describeWith('postgres', 'PlantRepository on PostgreSQL: two tenants', (server) => {
  let database: TestDatabase;
  let store: PostgresStore;
  let plants: PlantRepository & PlantEventLog;
  const nameIn = async (tenant: TenantKey, id: bigint) => {
    const found = await plants.findById(tenant, id);
    return found === undefined ? undefined : (JSON.parse(found.json) as { name: string }).name;
  };
  const namesOf = (json: string) => (JSON.parse(json) as { name: string }[]).map((plant) => plant.name);

  beforeAll(async () => {
    database = await createTestDatabase(server);
    store = createStore(configOf(database.url, TENANTS_ON), captureLogs().logger, RESOURCES) as PostgresStore;
    await store.open();
    plants = plantRepository(store);
  });

  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('when each tenant creates the same id, then each reads its own plant and a third reads none', async () => {
    const id = BigInt(uniqueId());

    const created = await Promise.all([plants.create(ALICE, { id, name: 'Alice fern' }), plants.create(BOB, { id, name: 'Bob cactus' })]);
    const again = await plants.create(BOB, { id, name: 'Bob cactus' });

    expect([...created, again].map((outcome) => outcome.outcome)).toEqual(['created', 'created', 'replayed']);
    expect([await nameIn(ALICE, id), await nameIn(BOB, id), await nameIn(SHARED_TENANT, id), await nameIn('carol' as TenantKey, id)]).toEqual(['Alice fern', 'Bob cactus', undefined, undefined]);
  });

  it('when the tenants share a tag and names, then each list and count holds its own plants alone, in every order and search', async () => {
    const base = BigInt(uniqueId()) * 10n;
    const tag = `shared-${base}`;
    await Promise.all([1n, 2n, 3n].map((n) => plants.create(ALICE, { id: base + n, name: `Ivy ${base} a${n}`, tag })));
    await plants.create(BOB, { id: base + 2n, name: `Ivy ${base} b2`, tag });

    const lists = await Promise.all(
      [ALICE, BOB].flatMap((tenant) => [
        plants.list(tenant, { limit: 10, tag, count: true }),
        plants.list(tenant, { limit: 10, tag, sort: '-name', count: true }),
        plants.list(tenant, { limit: 10, search: `ivy ${base}`, sort: 'createdAt', count: true }),
      ]),
    );

    expect(lists.map((page) => [namesOf(page.json), page.total])).toEqual([
      [[`Ivy ${base} a1`, `Ivy ${base} a2`, `Ivy ${base} a3`], 3],
      [[`Ivy ${base} a3`, `Ivy ${base} a2`, `Ivy ${base} a1`], 3],
      [[`Ivy ${base} a1`, `Ivy ${base} a2`, `Ivy ${base} a3`], 3],
      [[`Ivy ${base} b2`], 1],
      [[`Ivy ${base} b2`], 1],
      [[`Ivy ${base} b2`], 1],
    ]);
  });

  it('when one tenant edits, replaces and deletes its plant, then the other tenant\'s plant of the same id stays as it was', async () => {
    const id = BigInt(uniqueId());
    await plants.create(ALICE, { id, name: 'Alice one' });
    const bob = await plants.create(BOB, { id, name: 'Bob one' });

    const updated = await plants.update(ALICE, id, { name: 'Alice renamed' });
    const put = await plants.put(BOB, id, { name: 'Bob replaced' });
    const deleted = await plants.delete(ALICE, id);
    // Bob's old version names no plant of Alice's, whose id is gone.
    const foreignVersion = await plants.update(ALICE, id, { name: 'x' }, [bob.version]);

    expect([updated.outcome, put.outcome, deleted.outcome, foreignVersion.outcome]).toEqual(['updated', 'updated', 'deleted', 'missing']);
    expect([await nameIn(ALICE, id), await nameIn(BOB, id)]).toEqual([undefined, 'Bob replaced']);
  });

  it('when a version of one tenant\'s plant is named for the other\'s (If-Match), then it is stale there', async () => {
    const id = BigInt(uniqueId());
    const alice = await plants.create(ALICE, { id, name: 'Alice two' });
    await plants.create(BOB, { id, name: 'Bob two' });

    const stale = await plants.update(BOB, id, { name: 'Bob moved' }, [alice.version]);

    expect([stale.outcome, await nameIn(BOB, id)]).toEqual(['stale', 'Bob two']);
  });

  it('when both tenants send batches over the same ids in one turn, then each applies to its own plants', async () => {
    const id = BigInt(uniqueId());

    const [alice, bob] = await Promise.all([
      plants.batch(ALICE, [{ kind: 'create', plant: { id, name: 'A batch' } }, { kind: 'update', id, patch: { tag: 'a' } }]),
      plants.batch(BOB, [{ kind: 'create', plant: { id, name: 'B batch' } }, { kind: 'delete', id }]),
    ]);

    expect([alice.outcome, bob.outcome]).toEqual(['applied', 'applied']);
    expect([await plants.findById(ALICE, id).then((found) => JSON.parse(found?.json ?? 'null') as unknown), await nameIn(BOB, id)]).toEqual([
      expect.objectContaining({ name: 'A batch', tag: 'a' }),
      undefined,
    ]);
  });

  it('when each tenant writes with the same caller and Idempotency-Key, then both writes apply and each tenant keeps its own answer', async () => {
    const id = BigInt(uniqueId());
    const key = `key-${id}`;
    const keepOf = (): KeepAnswer => ({
      caller: 'token:admin',
      key,
      fingerprint: 'f',
      expiresAt: Date.now() + 60_000,
      render: (outcome, text) => ({ status: 201, body: outcome.outcome, ...('version' in outcome && outcome.version !== undefined ? { etag: etagOf(outcome.version, text) } : {}) }),
    });
    const keys = postgresIdempotencyKeys(store.pool);

    const [alice, bob] = await Promise.all([plants.create(ALICE, { id, name: 'Keyed A' }, { keep: keepOf() }), plants.create(BOB, { id, name: 'Keyed B' }, { keep: keepOf() })]);
    const answers = await Promise.all([ALICE, BOB, SHARED_TENANT].map((tenant) => keys.find(tenant, 'token:admin', key, Date.now())));

    expect([alice.outcome, bob.outcome]).toEqual(['created', 'created']);
    expect(answers).toEqual([
      { fingerprint: 'f', status: 201, body: 'created', etag: `"${alice.version}"` },
      { fingerprint: 'f', status: 201, body: 'created', etag: `"${bob.version}"` },
      undefined,
    ]);
  });

  it('when a tenant\'s key is saved after the write, then only that tenant finds it', async () => {
    const keys = postgresIdempotencyKeys(store.pool);
    const key = `saved-${uniqueId()}`;

    await keys.save(BOB, 'token:b', key, { fingerprint: 'g', status: 200, body: 'ok' }, Date.now() + 60_000);

    expect(await Promise.all([BOB, ALICE, SHARED_TENANT].map((tenant) => keys.find(tenant, 'token:b', key, Date.now())))).toEqual([
      { fingerprint: 'g', status: 200, body: 'ok' },
      undefined,
      undefined,
    ]);
  });

  it('when a tenant reads its events, then it gets its own alone, and the live read names each event\'s tenant', async () => {
    const id = BigInt(uniqueId());
    const start = (await plants.list(ALICE, { limit: 1 })).position;
    await plants.create(ALICE, { id, name: 'Event A' });
    await plants.create(BOB, { id, name: 'Event B' });

    const alice = await (plants as unknown as PostgresPlantRepository).readTenantEvents(ALICE, start, 100);
    const all = await plants.readEvents(start, 100);

    expect(alice.map((event) => [event.tenant, event.id, event.name])).toEqual([['alice', id, 'Event A']]);
    expect(all.filter((event) => event.id === id).map((event) => [event.tenant, event.name])).toEqual([
      ['alice', 'Event A'],
      ['bob', 'Event B'],
    ]);
  });
});

describeWith('postgres', 'PostgreSQL with tenants on: the shared tenant needs TENANT_DEFAULT', (server) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(server);
  });

  afterEach(async () => {
    await database.drop();
  });

  const openWith = async (tenants: Config['tenants']) => {
    const { logs, logger } = captureLogs();
    const store = createStore(configOf(database.url, tenants), logger, RESOURCES) as PostgresStore;
    await store.open();
    const ready = await store.readiness();
    await store.close();
    return { ready, errors: logs.filter((line) => line.level === 50).map((line) => line.msg) };
  };

  it('when the store holds plants of the shared tenant and TENANT_DEFAULT is unset, then it stays unready and says to set TENANT_DEFAULT', async () => {
    await openWith(undefined);
    runSql(database.url, "/* unchecked: test */ INSERT INTO plants (id, name, version) VALUES (1, 'Before tenants', 0)");

    const refused = await openWith(TENANTS_ON);
    const withDefault = await openWith({ ...TENANTS_ON, defaultName: 'alice' });
    const off = await openWith(undefined);

    expect({ refused, withDefault, off }).toEqual({
      refused: { ready: false, errors: [expect.stringMatching(/^TENANT_DEFAULT: the store holds plants stored before tenants were turned on; set TENANT_DEFAULT/)] },
      withDefault: { ready: true, errors: [] },
      off: { ready: true, errors: [] },
    });
  });

  it('when the store holds no plant of the shared tenant, then tenants need no TENANT_DEFAULT', async () => {
    await openWith(undefined);
    runSql(database.url, "/* unchecked: test */ INSERT INTO plants (tenant, id, name, version) VALUES ('bob', 1, 'Bob''s', 0)");

    expect(await openWith(TENANTS_ON)).toEqual({ ready: true, errors: [] });
  });
});
