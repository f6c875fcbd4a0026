import { appForAll } from '../helpers/fixtures';
import { uniqueId } from '../helpers/plants';
import { actingAs, as, tenantEnv, tenantTokenFileForAll, withoutId, type Caller } from '../helpers/tenant-tokens';

// Every read and write of one plant, with alice and bob holding plants under the same ids: each sees and changes
// only their own, and another tenant's plant answers exactly as a missing one. Each check is made from both sides,
// so a statement that lost its tenant condition fails whichever tenant's row it would find first.
const tokens = tenantTokenFileForAll();
const app = appForAll(() => tenantEnv(tokens));

type Headers = Record<string, string>;
const json = { 'Content-Type': 'application/json' };
const create = (who: Headers, plant: Record<string, unknown>) => app.request.post('/plants').set({ ...json, ...who }).send(JSON.stringify(plant));
const get = (who: Headers, id: number, headers: Headers = {}) => app.request.get(`/plants/${id}`).set({ ...who, ...headers });
const head = (who: Headers, id: number) => app.request.head(`/plants/${id}`).set(who);
const patch = (who: Headers, id: number, body: unknown, headers: Headers = {}) =>
  app.request.patch(`/plants/${id}`).set({ ...json, ...who, ...headers }).send(JSON.stringify(body));
const put = (who: Headers, id: number, body: unknown, headers: Headers = {}) =>
  app.request.put(`/plants/${id}`).set({ ...json, ...who, ...headers }).send(JSON.stringify(body));
const remove = (who: Headers, id: number, headers: Headers = {}) => app.request.delete(`/plants/${id}`).set({ ...who, ...headers });
const batch = (who: Headers, operations: unknown[]) => app.request.post('/plants/batch').set({ ...json, ...who }).send(JSON.stringify({ operations }));
const seen = async (who: Headers, id: number) => {
  const response = await get(who, id);
  return response.status === 200 ? { name: (response.body as { name: string }).name, tag: (response.body as { tag?: string }).tag } : response.status;
};
const CALLERS: Caller[] = ['alice', 'bob'];
const errorOf = (response: { status: number; body: unknown }) => ({ status: response.status, error: (response.body as { error?: number }).error });

/** The same id in both tenants, each plant named after its owner, created in the order given. */
async function shared(order: Caller[] = CALLERS): Promise<number> {
  const id = uniqueId();
  for (const caller of order) expect((await create(as(caller), { id, name: `Fern of ${caller}`, tag: 'shared' })).status).toBe(200);
  return id;
}

/** An id only `owner` holds, and the answer the other tenant gets for an id nobody holds, as a reference. */
async function onlyIn(owner: Caller): Promise<number> {
  const id = uniqueId();
  expect((await create(as(owner), { id, name: `Ivy of ${owner}`, tag: 'shared' })).status).toBe(200);
  return id;
}
const other = (caller: Caller): Caller => (caller === 'alice' ? 'bob' : 'alice');

describe('one plant, two tenants sharing its id', () => {
  it('when both create the same id, then both succeed (no conflict) and each reads their own, by GET and HEAD', async () => {
    for (const order of [CALLERS, [...CALLERS].reverse()]) {
      const id = await shared(order);

      const reads = await Promise.all(CALLERS.map((caller) => get(as(caller), id)));
      const heads = await Promise.all(CALLERS.map((caller) => head(as(caller), id)));

      expect(reads.map((response) => [response.status, (response.body as { name: string }).name])).toEqual([
        [200, 'Fern of alice'],
        [200, 'Fern of bob'],
      ]);
      expect(heads.map((response) => [response.status, response.headers.etag])).toEqual(reads.map((response) => [200, response.headers.etag]));
      expect(reads[0]?.headers.etag).not.toBe(reads[1]?.headers.etag);
    }
  });

  it.each(CALLERS)("when %s asks for the other's plant, then GET, HEAD, PATCH and DELETE answer exactly as for a missing id", async (caller) => {
    const theirs = await onlyIn(other(caller));
    const missing = uniqueId();

    for (const [theirsAnswer, missingAnswer] of [
      [await get(as(caller), theirs), await get(as(caller), missing)],
      [await patch(as(caller), theirs, { tag: 'mine' }), await patch(as(caller), missing, { tag: 'mine' })],
      [await remove(as(caller), theirs), await remove(as(caller), missing)],
    ] as const) {
      expect({ status: theirsAnswer.status, body: withoutId(theirsAnswer.body, theirs), type: theirsAnswer.headers['content-type'], etag: theirsAnswer.headers.etag }).toEqual({
        status: 404,
        body: withoutId(missingAnswer.body, missing),
        type: missingAnswer.headers['content-type'],
        etag: undefined,
      });
    }
    expect(errorOf(await get(as(caller), theirs))).toEqual({ status: 404, error: 40402 });
    expect([(await head(as(caller), theirs)).status, (await head(as(caller), missing)).status]).toEqual([404, 404]);
    expect(await seen(as(other(caller)), theirs)).toEqual({ name: `Ivy of ${other(caller)}`, tag: 'shared' });
  });

  it.each(CALLERS)('when %s edits, replaces and deletes the shared id, then only their own plant changes', async (caller) => {
    const id = await shared();

    const edited = await patch(as(caller), id, { tag: 'edited' });
    const afterEdit = await Promise.all(CALLERS.map((who) => seen(as(who), id)));
    const replaced = await put(as(caller), id, { name: `Replaced by ${caller}` });
    const afterPut = await Promise.all(CALLERS.map((who) => seen(as(who), id)));
    const deleted = await remove(as(caller), id);
    const afterDelete = await Promise.all(CALLERS.map((who) => seen(as(who), id)));

    const untouched = { name: `Fern of ${other(caller)}`, tag: 'shared' };
    const pair = (mine: unknown) => (caller === 'alice' ? [mine, untouched] : [untouched, mine]);
    expect([edited.status, replaced.status, deleted.status]).toEqual([200, 200, 204]);
    expect(afterEdit).toEqual(pair({ name: `Fern of ${caller}`, tag: 'edited' }));
    expect(afterPut).toEqual(pair({ name: `Replaced by ${caller}`, tag: undefined }));
    expect(afterDelete).toEqual(pair(404));
  });

  it.each(CALLERS)("when %s PUTs an id only the other holds, then it is created in their tenant (201) and the other's stays", async (caller) => {
    const theirs = await onlyIn(other(caller));

    const created = await put(as(caller), theirs, { name: `Mine, ${caller}` });

    expect([created.status, created.headers.location]).toEqual([201, `/plants/${theirs}`]);
    expect(await seen(as(caller), theirs)).toEqual({ name: `Mine, ${caller}`, tag: undefined });
    expect(await seen(as(other(caller)), theirs)).toEqual({ name: `Ivy of ${other(caller)}`, tag: 'shared' });
  });

  it.each(CALLERS)("when %s sends the other's ETag or preconditions about the other's plant, then they hold only for their own", async (caller) => {
    const id = await shared();
    const theirs = await onlyIn(other(caller));
    const theirEtag = (await get(as(other(caller)), id)).headers.etag as string;
    const myEtag = (await get(as(caller), id)).headers.etag as string;

    const staleMatch = await patch(as(caller), id, { tag: 'x' }, { 'If-Match': theirEtag });
    const notModified = await get(as(caller), id, { 'If-None-Match': theirEtag });
    const anyOnTheirs = await put(as(caller), theirs, { name: 'x' }, { 'If-Match': '*' });
    const createOnly = await put(as(caller), theirs, { name: `Only mine, ${caller}` }, { 'If-None-Match': '*' });
    const deleteTheirs = await remove(as(caller), theirs, { 'If-Match': '*' });
    const mine = await get(as(caller), id, { 'If-None-Match': myEtag });

    expect(errorOf(staleMatch)).toEqual({ status: 412, error: 41201 });
    expect(notModified.status).toBe(200);
    expect(errorOf(anyOnTheirs)).toEqual({ status: 412, error: 41201 });
    expect(createOnly.status).toBe(201);
    expect(deleteTheirs.status).toBe(204);
    expect(mine.status).toBe(304);
    expect(await seen(as(other(caller)), theirs)).toEqual({ name: `Ivy of ${other(caller)}`, tag: 'shared' });
    expect(await seen(as(other(caller)), id)).toEqual({ name: `Fern of ${other(caller)}`, tag: 'shared' });
  });
});

describe('POST /plants/batch in two tenants', () => {
  it.each(CALLERS)("when %s's batch creates, updates and deletes ids the other holds too, then only their own plants change", async (caller) => {
    const id = await shared();
    const fresh = uniqueId();
    await create(as(other(caller)), { id: fresh, name: `Elsewhere of ${other(caller)}` });

    const response = await batch(as(caller), [
      { op: 'create', plant: { id: fresh, name: `Batch of ${caller}` } },
      { op: 'update', id, patch: { tag: 'batched' } },
      { op: 'put', id: fresh, plant: { name: `Batch put of ${caller}` } },
      { op: 'delete', id },
    ]);

    expect(response.status).toBe(200);
    expect(await seen(as(caller), fresh)).toEqual({ name: `Batch put of ${caller}`, tag: undefined });
    expect(await seen(as(caller), id)).toBe(404);
    expect(await seen(as(other(caller)), fresh)).toEqual({ name: `Elsewhere of ${other(caller)}`, tag: undefined });
    expect(await seen(as(other(caller)), id)).toEqual({ name: `Fern of ${other(caller)}`, tag: 'shared' });
  });

  it.each(CALLERS)("when %s's batch touches an id only the other holds, then it fails as for a missing id and writes nothing", async (caller) => {
    const theirs = await onlyIn(other(caller));
    const missing = uniqueId();
    const fresh = uniqueId();

    const onTheirs = await batch(as(caller), [{ op: 'create', plant: { id: fresh, name: 'never' } }, { op: 'update', id: theirs, patch: { tag: 'x' } }]);
    const onMissing = await batch(as(caller), [{ op: 'create', plant: { id: fresh, name: 'never' } }, { op: 'update', id: missing, patch: { tag: 'x' } }]);

    expect([onTheirs.status, withoutId(onTheirs.body, theirs)]).toEqual([404, withoutId(onMissing.body, missing)]);
    expect(await seen(as(caller), fresh)).toBe(404);
    expect(await seen(as(other(caller)), theirs)).toEqual({ name: `Ivy of ${other(caller)}`, tag: 'shared' });
  });
});

describe('Idempotency-Key: one caller acting in two tenants', () => {
  it('when the operator sends the same key and request in alice and then in bob, then each tenant gets its own write, and a retry in each replays its own', async () => {
    const key = `tenant-key-${uniqueId()}`;
    const id = uniqueId();
    const send = (tenant: string) => create({ ...actingAs(tenant), 'Idempotency-Key': key }, { id, name: 'Keyed fern' });

    const inAlice = await send('alice');
    const inBob = await send('bob');
    const againInAlice = await send('alice');
    const againInBob = await send('bob');

    expect([inAlice.status, inAlice.headers['idempotent-replayed'], inBob.status, inBob.headers['idempotent-replayed']]).toEqual([200, undefined, 200, undefined]);
    expect([againInAlice.headers['idempotent-replayed'], againInBob.headers['idempotent-replayed']]).toEqual(['true', 'true']);
    expect([againInAlice.headers.etag, againInBob.headers.etag]).toEqual([inAlice.headers.etag, inBob.headers.etag]);
    expect(inAlice.headers.etag).not.toBe(inBob.headers.etag);
    expect(await Promise.all(CALLERS.map((caller) => seen(as(caller), id)))).toEqual([
      { name: 'Keyed fern', tag: undefined },
      { name: 'Keyed fern', tag: undefined },
    ]);
  });

  it('when the same key comes with another body in the other tenant, then it is processed there, not refused as a reuse (422)', async () => {
    const key = `tenant-key-${uniqueId()}`;
    const id = await shared();

    const inAlice = await patch({ ...actingAs('alice'), 'Idempotency-Key': key }, id, { tag: 'a' });
    const inBob = await patch({ ...actingAs('bob'), 'Idempotency-Key': key }, id, { tag: 'b' });

    expect([inAlice.status, inBob.status, inBob.headers['idempotent-replayed']]).toEqual([200, 200, undefined]);
    expect(await Promise.all(CALLERS.map((caller) => seen(as(caller), id)))).toEqual([
      { name: 'Fern of alice', tag: 'a' },
      { name: 'Fern of bob', tag: 'b' },
    ]);
  });
});

describe('Act-As-Tenant', () => {
  it("when the operator acts in alice or bob, then it reads and writes exactly that tenant's plants; in its own tenant, neither", async () => {
    const id = await shared();

    const inAlice = await get(actingAs('alice'), id);
    const inBob = await get(actingAs('bob'), id);
    const own = await get(actingAs('ops'), id);
    const written = await patch(actingAs('bob'), id, { tag: 'by operator' });

    expect([inAlice.status, (inAlice.body as { name: string }).name, inBob.status, (inBob.body as { name: string }).name]).toEqual([200, 'Fern of alice', 200, 'Fern of bob']);
    expect([own.status, written.status]).toEqual([404, 200]);
    expect(await Promise.all(CALLERS.map((caller) => seen(as(caller), id)))).toEqual([
      { name: 'Fern of alice', tag: 'shared' },
      { name: 'Fern of bob', tag: 'by operator' },
    ]);
  });

  it('when the operator creates in a tenant no token names, then only that tenant sees it', async () => {
    const id = uniqueId();

    const created = await create(actingAs('carol'), { id, name: 'Carol fern' });

    expect(created.status).toBe(200);
    expect(await seen(actingAs('carol'), id)).toEqual({ name: 'Carol fern', tag: undefined });
    expect(await Promise.all(CALLERS.map((caller) => seen(as(caller), id)))).toEqual([404, 404]);
  });
});
