import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { openDatabase, type Db } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { sqliteIdempotencyKeys, type IdempotencyKeys } from '../../src/plants/plant.idempotency-keys';
import type { PlantEventLog } from '../../src/plants/plant.events';
import type { KeepAnswer, PlantRepository } from '../../src/plants/plant.repository';
import { RESOURCES } from '../../src/resources';
import { sqliteParts } from '../../src/store/store.sqlite';
import { SHARED_TENANT, type TenantKey } from '../../src/tenant';
import { captureLogs } from '../helpers/common';
import { uniqueId, withTimes } from '../helpers/plants';
import { plantRepository } from '../helpers/store-parts';

// Two tenants in one SQLite store, each holding a plant under the same id, tag and searchable name: every
// repository method acts inside the tenant it is given, and a plant of the other tenant is exactly a missing one.

const ALICE = 'alice' as TenantKey;
const BOB = 'bob' as TenantKey;

type Subject = { db: Db; plants: PlantRepository & PlantEventLog; keys: IdempotencyKeys; close: () => void };

function open(): Subject {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-tenants-'));
  const file = path.join(dir, 'plants.db');
  const db = openDatabase(file, { busyTimeoutMs: 1000 });
  const migrations = loadMigrations();
  migrate(db, migrations);
  const config = loadConfig({ DATABASE_URL: `file:${file}`, AUTH_TOKENS: 'x'.repeat(32) });
  return {
    db,
    plants: plantRepository(sqliteParts(db, migrations, config, captureLogs().logger, RESOURCES)),
    keys: sqliteIdempotencyKeys(db),
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const names = (json: string) => (JSON.parse(json) as { name: string }[]).map((plant) => plant.name);

describe('PlantRepository on SQLite, two tenants with the same ids', () => {
  let subject: Subject;
  let id: bigint;
  beforeAll(() => {
    subject = open();
  });
  afterAll(() => {
    subject.close();
  });
  beforeEach(async () => {
    id = BigInt(uniqueId());
    await subject.plants.create(ALICE, { id, name: `Fern ${id} of alice`, tag: `t${id}` });
  });

  it('when bob creates the id alice holds, then it is bob\'s own new plant and each reads only their own', async () => {
    const created = await subject.plants.create(BOB, { id, name: `Fern ${id} of bob`, tag: `t${id}` });

    const [alices, bobs, shared] = await Promise.all([ALICE, BOB, SHARED_TENANT].map((tenant) => subject.plants.findById(tenant, id)));

    expect(created).toMatchObject({ outcome: 'created', stored: withTimes({ id, name: `Fern ${id} of bob`, tag: `t${id}` }) });
    expect(JSON.parse(alices?.json ?? 'null')).toMatchObject({ name: `Fern ${id} of alice` });
    expect(JSON.parse(bobs?.json ?? 'null')).toMatchObject({ name: `Fern ${id} of bob` });
    expect(shared).toBeUndefined();
  });

  it('when each lists and counts by tag, by search and by every order, then each sees only their own plant', async () => {
    await subject.plants.create(BOB, { id, name: `Fern ${id} of bob`, tag: `t${id}` });
    const shapes = [{ tag: `t${id}` }, { search: `fern ${id}` }, { tag: `t${id}`, search: 'fern', sort: 'name' as const }, { search: `${id}`, sort: '-updatedAt' as const }];

    const pages = await Promise.all(
      [ALICE, BOB].flatMap((tenant) => shapes.map(async (shape) => ({ tenant, page: await subject.plants.list(tenant, { limit: 10, count: true, ...shape }) }))),
    );

    for (const { tenant, page } of pages) {
      expect({ tenant, names: names(page.json), total: page.total }).toEqual({ tenant, names: [`Fern ${id} of ${tenant}`], total: 1 });
    }
  });

  it('when bob edits, puts and deletes the id, then alice\'s plant is untouched; bob\'s writes of a missing id are missing', async () => {
    const patched = await subject.plants.update(BOB, id, { name: 'bob renamed' });
    const deleted = await subject.plants.delete(BOB, id);
    const put = await subject.plants.put(BOB, id, { name: 'bob put' });
    const putAgain = await subject.plants.put(BOB, id, { name: 'bob put again' });
    await subject.plants.delete(BOB, id);

    const alices = await subject.plants.findById(ALICE, id);

    expect([patched.outcome, deleted.outcome, put.outcome, putAgain.outcome]).toEqual(['missing', 'missing', 'created', 'updated']);
    expect(JSON.parse(alices?.json ?? 'null')).toMatchObject({ name: `Fern ${id} of alice`, tag: `t${id}` });
  });

  it('when alice\'s ETag is sent with bob\'s write, then it never matches bob\'s plant', async () => {
    const alices = await subject.plants.findById(ALICE, id);
    await subject.plants.create(BOB, { id, name: 'bob' });

    const edit = await subject.plants.update(BOB, id, { name: 'stale' }, [alices?.version ?? 0n]);

    expect(edit).toEqual({ outcome: 'stale', version: expect.any(BigInt) });
  });

  it('when bob sends a batch over the id, then it applies in bob\'s tenant only', async () => {
    const outcome = await subject.plants.batch(BOB, [
      { kind: 'create', plant: { id, name: 'bob batch' } },
      { kind: 'update', id, patch: { tag: 'b' } },
    ]);

    const [alices, bobs] = await Promise.all([ALICE, BOB].map((tenant) => subject.plants.findById(tenant, id)));

    expect(outcome).toMatchObject({ outcome: 'applied', results: [{ outcome: 'created' }, { outcome: 'updated' }] });
    expect(JSON.parse(alices?.json ?? 'null')).toMatchObject({ name: `Fern ${id} of alice`, tag: `t${id}` });
    expect(JSON.parse(bobs?.json ?? 'null')).toMatchObject({ name: 'bob batch', tag: 'b' });
  });

  it('when the change feed catches up per tenant, then each tenant reads only its own events', async () => {
    const after = (await subject.plants.eventBounds()).last;
    await subject.plants.create(BOB, { id, name: 'bob feed' });
    await subject.plants.update(ALICE, id, { name: 'alice feed' });

    const [alices, bobs, all] = await Promise.all([
      subject.plants.readTenantEvents(ALICE, after, 10),
      subject.plants.readTenantEvents(BOB, after, 10),
      subject.plants.readEvents(after, 10),
    ]);

    expect(alices.map((event) => [event.tenant, event.kind, event.name])).toEqual([['alice', 'updated', 'alice feed']]);
    expect(bobs.map((event) => [event.tenant, event.kind, event.name])).toEqual([['bob', 'created', 'bob feed']]);
    expect(all.map((event) => event.tenant)).toEqual(['bob', 'alice']);
  });

  it('when one caller saves the same key in two tenants, then each tenant finds its own answer', async () => {
    const key = `key-${id}`;
    const expires = Date.now() + 60_000;
    await subject.keys.save(ALICE, 'caller', key, { fingerprint: 'a', status: 201, body: '"alice"' }, expires);
    await subject.keys.save(BOB, 'caller', key, { fingerprint: 'b', status: 201, body: '"bob"' }, expires);

    const found = await Promise.all([ALICE, BOB, SHARED_TENANT].map((tenant) => subject.keys.find(tenant, 'caller', key, Date.now())));

    expect(found).toEqual([{ fingerprint: 'a', status: 201, body: '"alice"' }, { fingerprint: 'b', status: 201, body: '"bob"' }, undefined]);
  });

  it('when a keyed write is kept in one tenant, then the same key is free in the other and its write applies', async () => {
    const keep = (tenant: string): KeepAnswer => ({
      caller: 'caller',
      key: `kept-${id}`,
      fingerprint: tenant,
      expiresAt: Date.now() + 60_000,
      render: () => ({ status: 201, body: `"${tenant}"` }),
    });

    const alices = await subject.plants.update(ALICE, id, { tag: 'kept' }, undefined, { keep: keep('alice') });
    const bobs = await subject.plants.create(BOB, { id, name: 'bob keyed' }, { keep: keep('bob') });

    expect([alices.outcome, bobs.outcome]).toEqual(['updated', 'created']);
    expect(await subject.keys.find(ALICE, 'caller', `kept-${id}`, Date.now())).toEqual({ fingerprint: 'alice', status: 201, body: '"alice"' });
    expect(await subject.keys.find(BOB, 'caller', `kept-${id}`, Date.now())).toEqual({ fingerprint: 'bob', status: 201, body: '"bob"' });
  });

  it('when keys expire in two tenants, then the prune deletes both and keeps the live ones', async () => {
    const expired = Date.now() - 1000;
    const live = Date.now() + 60_000;
    await Promise.all([
      subject.keys.save(ALICE, 'pruned', `old-${id}`, { fingerprint: 'a', status: 201 }, expired),
      subject.keys.save(BOB, 'pruned', `old-${id}`, { fingerprint: 'b', status: 201 }, expired),
      subject.keys.save(BOB, 'pruned', `new-${id}`, { fingerprint: 'c', status: 201 }, live),
    ]);
    const stored = () => subject.db.prepare(`SELECT tenant, key FROM idempotency_keys WHERE caller = 'pruned' ORDER BY tenant, key /* unchecked: test */`).raw().all();

    await subject.keys.prune(Date.now(), 1000);

    expect(stored()).toEqual([['bob', `new-${id}`]]);
  });
});
