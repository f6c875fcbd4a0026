import { answerOf, decideWrite, rowAfter, type PlantRow } from '../../src/plants/plant.write-rule';

const stored: PlantRow = { id: 7n, name: 'Fern', tag: 'green', version: 40n };

describe('decideWrite', () => {
  it('when no plant has the id, then a create inserts it with a created event', () => {
    expect(decideWrite(undefined, { kind: 'create', plant: { id: 7n, name: 'Fern' } })).toEqual({
      outcome: 'created',
      put: { id: 7n, name: 'Fern' },
      event: { kind: 'created', id: 7n, name: 'Fern' },
    });
  });

  it('when the same plant is stored, then a create is a replay that writes nothing', () => {
    expect(decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Fern', tag: 'green' } })).toEqual({ outcome: 'replayed', current: stored });
  });

  it('when another plant holds the id, then a create is a conflict', () => {
    expect(decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Fern' } })).toEqual({ outcome: 'conflict', current: stored });
  });

  it('when the plant is missing, then an edit and a delete answer missing', () => {
    expect(decideWrite(undefined, { kind: 'update', id: 7n, patch: { name: 'Ivy' } })).toEqual({ outcome: 'missing' });
    expect(decideWrite(undefined, { kind: 'delete', id: 7n, expected: [1n] })).toEqual({ outcome: 'missing' });
  });

  it('when If-Match names another version, then an edit and a delete are stale', () => {
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Ivy' }, expected: [39n] })).toEqual({ outcome: 'stale', current: stored });
    expect(decideWrite(stored, { kind: 'delete', id: 7n, expected: [] })).toEqual({ outcome: 'stale', current: stored });
  });

  it('when an edit changes the name and removes the tag, then it puts the merge with the tag it replaced', () => {
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Ivy', tag: null }, expected: [40n] })).toEqual({
      outcome: 'updated',
      put: { id: 7n, name: 'Ivy' },
      event: { kind: 'updated', id: 7n, name: 'Ivy', prevTag: 'green' },
    });
  });

  it('when an edit leaves every value as it is, then it is unchanged and writes nothing', () => {
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: {} })).toEqual({ outcome: 'unchanged', current: stored });
    expect(decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Fern', tag: 'green' } })).toEqual({ outcome: 'unchanged', current: stored });
  });

  it('when a delete matches, then it removes the plant with an event carrying its tag', () => {
    expect(decideWrite(stored, { kind: 'delete', id: 7n, expected: [40n] })).toEqual({
      outcome: 'deleted',
      remove: 7n,
      event: { kind: 'deleted', id: 7n, tag: 'green' },
    });
  });
});

describe('rowAfter', () => {
  it('when writes of one id follow each other in a batch, then each is decided against the row the last one left', () => {
    const created = decideWrite(undefined, { kind: 'create', plant: { id: 7n, name: 'Fern' } });
    const row = rowAfter(undefined, created, 41n);
    const deleted = decideWrite(row, { kind: 'delete', id: 7n, expected: [41n] });

    expect(row).toEqual({ id: 7n, name: 'Fern', version: 41n });
    expect(rowAfter(row, deleted, 42n)).toBeUndefined();
    expect(rowAfter(stored, { outcome: 'stale', current: stored }, undefined)).toBe(stored);
  });
});

describe('answerOf', () => {
  it('when a write stores a plant, then it answers the plant as stored with the version its event took', () => {
    const updated = decideWrite(stored, { kind: 'update', id: 7n, patch: { tag: null } });

    expect(answerOf(updated, 41n)).toEqual({ outcome: 'updated', stored: { id: 7n, name: 'Fern' }, version: 41n });
  });

  it('when a write stores nothing, then it answers the plant as stored and its version, or the outcome alone', () => {
    const outcomes = [
      decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Fern', tag: 'green' } }),
      decideWrite(stored, { kind: 'create', plant: { id: 7n, name: 'Ivy' } }),
      decideWrite(stored, { kind: 'update', id: 7n, patch: { name: 'Fern' } }),
      decideWrite(stored, { kind: 'delete', id: 7n, expected: [1n] }),
      decideWrite(undefined, { kind: 'delete', id: 7n }),
      decideWrite(stored, { kind: 'delete', id: 7n }),
    ].map((decision) => answerOf(decision, undefined));

    expect(outcomes).toEqual([
      { outcome: 'replayed', stored: { id: 7n, name: 'Fern', tag: 'green' }, version: 40n },
      { outcome: 'conflict', stored: { id: 7n, name: 'Fern', tag: 'green' }, version: 40n },
      { outcome: 'unchanged', stored: { id: 7n, name: 'Fern', tag: 'green' }, version: 40n },
      { outcome: 'stale', version: 40n },
      { outcome: 'missing' },
      { outcome: 'deleted' },
    ]);
  });
});
