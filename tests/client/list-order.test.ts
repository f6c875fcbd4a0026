import { compareCodePoints, comparePlants, matchesQuery, searchKey } from '../../clients/typescript/src/order';
import { applyChange } from '../../clients/typescript/src/window';
import type { StoredPlant } from '../../clients/typescript/src/index';

const T = '2026-11-27T10:00:00.000Z';
const plant = (id: bigint, name: string, tag?: string, updatedAt = T): StoredPlant => ({ id, name, ...(tag === undefined ? {} : { tag }), createdAt: T, updatedAt });
const names = (plants: StoredPlant[]) => plants.map((each) => each.name);

describe('the client\'s list order (clients/typescript/src/order.ts), the one the service sorts by', () => {
  it('when strings differ past the Basic Multilingual Plane, then they compare by code point, not by UTF-16 unit', () => {
    expect(compareCodePoints('😀', '\uFFFD')).toBeGreaterThan(0);
    expect('😀' < '\uFFFD').toBe(true);
    expect(compareCodePoints('\uE000', '😀')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
    expect(compareCodePoints('Fern', 'Fern')).toBe(0);
  });

  it('when sorted by name, then by NFKC lower-cased name, ties by the exact name, then by id, and -name is the reverse', () => {
    const plants = [plant(3n, 'fern'), plant(1n, 'Fern'), plant(2n, 'ﬁg'), plant(4n, 'Émile'), plant(5n, 'fern'), plant(6n, '🌿 moss'), plant(7n, '\uFFFD')];

    const byName = [...plants].sort(comparePlants('name'));
    const descending = [...plants].sort(comparePlants('-name'));

    expect(byName.map((each) => `${each.name}#${each.id}`)).toEqual(['Fern#1', 'fern#3', 'fern#5', 'ﬁg#2', 'Émile#4', '\uFFFD#7', '🌿 moss#6']);
    expect(descending).toEqual([...byName].reverse());
  });

  it('when sorted by a time, then ties go by id in the same direction', () => {
    const plants = [plant(2n, 'b', undefined, '2026-01-01T00:00:00.000Z'), plant(1n, 'a', undefined, '2026-01-01T00:00:00.000Z'), plant(3n, 'c', undefined, '2025-12-31T23:59:59.999Z')];

    expect(names([...plants].sort(comparePlants('updatedAt')))).toEqual(['c', 'a', 'b']);
    expect(names([...plants].sort(comparePlants('-updatedAt')))).toEqual(['b', 'a', 'c']);
    expect(names([...plants].sort(comparePlants('-id')))).toEqual(['c', 'b', 'a']);
  });

  it('when a plant is matched, then q is a plain substring of the NFKC lower-cased name and tag is exact', () => {
    expect(searchKey('ＦＩＧ ﬁ')).toBe('fig fi');
    expect(matchesQuery({ q: 'FI' }, plant(1n, 'Wild ﬁg'))).toBe(true);
    expect(matchesQuery({ q: '%' }, plant(1n, 'Fig'))).toBe(false);
    expect(matchesQuery({ q: 'fig', tag: 'sun' }, plant(1n, 'Fig', 'shade'))).toBe(false);
  });
});

describe('a change applied to a sorted window (clients/typescript/src/window.ts)', () => {
  const query = { q: 'fern', sort: 'name' as const };
  const compare = comparePlants('name');
  const window = [plant(1n, 'Alpine fern'), plant(2n, 'Bird fern'), plant(3n, 'Cinnamon fern')];
  const updated = (changed: StoredPlant) => ({ type: 'plant.updated' as const, position: 10n, plant: changed });

  it('when a plant is renamed within the window, then it moves to its place and the count is unchanged', () => {
    const applied = applyChange(window, updated(plant(1n, 'Zebra fern')), query, compare, undefined);

    expect({ names: names(applied.plants), delta: applied.delta }).toEqual({ names: ['Bird fern', 'Cinnamon fern', 'Zebra fern'], delta: 0 });
  });

  it('when a plant is renamed out of the search, then it leaves and the count drops', () => {
    const applied = applyChange(window, updated(plant(2n, 'Bird of paradise')), query, compare, undefined);

    expect({ names: names(applied.plants), delta: applied.delta }).toEqual({ names: ['Alpine fern', 'Cinnamon fern'], delta: -1 });
  });

  it('when more pages follow, then a plant sorting past the last loaded one is left for them, and an unseen one cannot be counted', () => {
    const boundary = window[2];

    const past = applyChange(window, updated(plant(9n, 'Maidenhair fern')), query, compare, boundary);
    const before = applyChange(window, updated(plant(9n, 'Bracken fern')), query, compare, boundary);
    const created = applyChange(window, { type: 'plant.created', position: 11n, plant: plant(8n, 'Bracken fern') }, query, compare, boundary);
    const deleted = applyChange(window, { type: 'plant.deleted', position: 12n, id: 9n }, query, compare, boundary);

    expect({ names: names(past.plants), delta: past.delta, beyond: past.beyond }).toEqual({ names: names(window), delta: undefined, beyond: true });
    expect({ names: names(before.plants), delta: before.delta }).toEqual({ names: ['Alpine fern', 'Bird fern', 'Bracken fern', 'Cinnamon fern'], delta: undefined });
    expect({ names: names(created.plants), delta: created.delta }).toEqual({ names: ['Alpine fern', 'Bird fern', 'Bracken fern', 'Cinnamon fern'], delta: 1 });
    expect({ names: names(deleted.plants), delta: deleted.delta }).toEqual({ names: names(window), delta: undefined });
  });
});
