import { answerOf, decideWrite, rowAfter, type PlantRow } from '../../src/plants/plant.write-rule';

const CREATED = '2026-11-20T08:00:00.000Z';
const NOW = '2026-11-27T09:41:07.250Z';
const stored: PlantRow = { id: 7n, name: 'Fern', tag: 'green', createdAt: CREATED, updatedAt: CREATED, version: 40n };
const times = { createdAt: CREATED, updatedAt: CREATED };

describe('decideWrite: put', () => {
  it('when no plant has the id, then a put creates it with the commit\'s times and a created event', () => {
    expect(decideWrite(undefined, { kind: 'put', id: 7n, plant: { name: 'Fern' } }, NOW)).toEqual({
      outcome: 'created',
      put: { id: 7n, name: 'Fern', createdAt: NOW, updatedAt: NOW },
      event: { kind: 'created', id: 7n, name: 'Fern', createdAt: NOW, updatedAt: NOW },
    });
  });

  it('when a plant has the id, then a put replaces every writable member (a tag left out is removed) and keeps createdAt', () => {
    expect(decideWrite(stored, { kind: 'put', id: 7n, plant: { name: 'Ivy' } }, NOW)).toEqual({
      outcome: 'updated',
      put: { id: 7n, name: 'Ivy', createdAt: CREATED, updatedAt: NOW },
      event: { kind: 'updated', id: 7n, name: 'Ivy', createdAt: CREATED, updatedAt: NOW, prevName: 'Fern', prevTag: 'green' },
    });
  });

  it('when the put equals the stored plant, then it is unchanged and writes nothing', () => {
    expect(decideWrite(stored, { kind: 'put', id: 7n, plant: { name: 'Fern', tag: 'green' } }, NOW)).toEqual({ outcome: 'unchanged', current: stored });
  });

  it('when a precondition fails, then a put is missing (none stored) or stale (one stored), and writes nothing', () => {
    expect(decideWrite(undefined, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: [40n] }, NOW)).toEqual({ outcome: 'missing' });
    expect(decideWrite(undefined, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: 'exists' }, NOW)).toEqual({ outcome: 'missing' });
    expect(decideWrite(stored, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: [39n] }, NOW)).toEqual({ outcome: 'stale', current: stored });
    expect(decideWrite(stored, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: 'absent' }, NOW)).toEqual({ outcome: 'stale', current: stored });
  });

  it('when a precondition holds, then a put applies: create-only on none, If-Match on its version, * on any plant', () => {
    expect(decideWrite(undefined, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: 'absent' }, NOW)).toMatchObject({ outcome: 'created' });
    expect(decideWrite(stored, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: [40n] }, NOW)).toMatchObject({ outcome: 'updated' });
    expect(decideWrite(stored, { kind: 'put', id: 7n, plant: { name: 'Ivy' }, expected: 'exists' }, NOW)).toMatchObject({ outcome: 'updated' });
  });
});

describe('decideWrite', () => {
  it('when no plant has the id, then a create inserts it with a created event', () => {
    expect(decideWrite(undefined, { kind: 'create', plant: { id: 7n, name: 'Fern' } }, NOW)).toEqual({
      outcome: 'created',
      put: { id: 7n, name: 'Fern', createdAt: NOW, updatedAt: NOW },
      event: { kind: 'created', id: 7n, name: 'Fern', createdAt: NOW, updatedAt: NOW },
    });
  });

  it('when an import hands in the times its line carries, then the created plant keeps them', () => {
    expect(decideWrite(undefined, { kind: 'create', plant: { id: 7n, name: 'Fern' }, stamps: times }, NOW)).toMatchObject({
      outcome: 'created',
      put: { id: 7n, name: 'Fern', ...times },
    });
  });

  it('when the same plant is stored, then a create is a replay that writes nothing', () => {
    expect(decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Fern', tag: 'green' } }, NOW)).toEqual({ outcome: 'replayed', current: stored });
  });

  it('when another plant holds the id, then a create is a conflict', () => {
    expect(decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Fern' } }, NOW)).toEqual({ outcome: 'conflict', current: stored });
  });

  it('when the plant is missing, then an edit and a delete answer missing', () => {
    expect(decideWrite(undefined, { kind: 'update', id: 7n, patch: { name: 'Ivy' } }, NOW)).toEqual({ outcome: 'missing' });
    expect(decideWrite(undefined, { kind: 'delete', id: 7n, expected: [1n] }, NOW)).toEqual({ outcome: 'missing' });
  });

  it('when If-Match names another version, then an edit and a delete are stale', () => {
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Ivy' }, expected: [39n] }, NOW)).toEqual({ outcome: 'stale', current: stored });
    expect(decideWrite(stored, { kind: 'delete', id: 7n, expected: [] }, NOW)).toEqual({ outcome: 'stale', current: stored });
  });

  it('when an edit changes the name and removes the tag, then it puts the merge with the tag it replaced', () => {
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Ivy', tag: null }, expected: [40n] }, NOW)).toEqual({
      outcome: 'updated',
      put: { id: 7n, name: 'Ivy', createdAt: CREATED, updatedAt: NOW },
      event: { kind: 'updated', id: 7n, name: 'Ivy', createdAt: CREATED, updatedAt: NOW, prevName: 'Fern', prevTag: 'green' },
    });
  });

  it('when an edit leaves every value as it is, then it is unchanged and writes nothing', () => {
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: {} }, NOW)).toEqual({ outcome: 'unchanged', current: stored });
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Fern', tag: 'green' } }, NOW)).toEqual({ outcome: 'unchanged', current: stored });
  });

  it('when a delete matches, then it removes the plant with an event carrying its name and tag', () => {
    expect(decideWrite(stored, { kind: 'delete', id: 7n, expected: [40n] }, NOW)).toEqual({
      outcome: 'deleted',
      remove: 7n,
      event: { kind: 'deleted', id: 7n, name: 'Fern', tag: 'green' },
    });
  });
});

describe('rowAfter', () => {
  it('when writes of one id follow each other in a batch, then each is decided against the row the last one left', () => {
    const created = decideWrite(undefined, { kind: 'create', plant: { id: 7n, name: 'Fern' } }, NOW);
    const row = rowAfter(undefined, created, 41n);
    const deleted = decideWrite(row, { kind: 'delete', id: 7n, expected: [41n] }, NOW);

    expect(row).toEqual({ id: 7n, name: 'Fern', createdAt: NOW, updatedAt: NOW, version: 41n });
    expect(rowAfter(row, deleted, 42n)).toBeUndefined();
    expect(rowAfter(stored, { outcome: 'stale', current: stored }, undefined)).toBe(stored);
  });
});

describe('answerOf', () => {
  it('when a write stores a plant, then it answers the plant as stored with the version its event took', () => {
    const updated = decideWrite(stored, { kind: 'update', id: 7n, patch: { tag: null } }, NOW);

    expect(answerOf(updated, 41n)).toEqual({ outcome: 'updated', stored: { id: 7n, name: 'Fern', createdAt: CREATED, updatedAt: NOW }, version: 41n });
  });

  it('when a write stores nothing, then it answers the plant as stored and its version, or the outcome alone', () => {
    const outcomes = [
      decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Fern', tag: 'green' } }, NOW),
      decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Ivy' } }, NOW),
      decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Fern' } }, NOW),
      decideWrite(stored, { kind: 'delete', id: 7n, expected: [1n] }, NOW),
      decideWrite(undefined, { kind: 'delete', id: 7n }, NOW),
      decideWrite(stored, { kind: 'delete', id: 7n }, NOW),
    ].map((decision) => answerOf(decision, undefined));

    expect(outcomes).toEqual([
      { outcome: 'replayed', stored: { id: 7n, name: 'Fern', tag: 'green', ...times }, version: 40n },
      { outcome: 'conflict', stored: { id: 7n, name: 'Fern', tag: 'green', ...times }, version: 40n },
      { outcome: 'unchanged', stored: { id: 7n, name: 'Fern', tag: 'green', ...times }, version: 40n },
      { outcome: 'stale', version: 40n },
      { outcome: 'missing' },
      { outcome: 'deleted' },
    ]);
  });
});
