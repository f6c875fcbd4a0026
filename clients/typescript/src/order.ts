/**
 * The service's list filter and order, on the client: where a changed plant belongs in a sorted, filtered list.
 * Must equal the server's (src/plants/plant.schemas.ts searchKey, and the ORDER BY of each store): names by
 * searchKey (NFKC, then toLowerCase) in code point order, ties by the exact name, then by id; times (RFC 3339,
 * fixed width) then id; all in the requested direction.
 */
import type { PlantQuery, PlantSort } from './list.js';
import type { StoredPlant } from './wire.js';

export const searchKey = (text: string): string => text.normalize('NFKC').toLowerCase();

/**
 * Code point order. JavaScript's < compares UTF-16 code units, which puts U+10000 and up (surrogates,
 * 0xD800–0xDFFF) before U+E000–U+FFFF; the stores compare code points (SQLite's binary UTF-8, PostgreSQL's "C").
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    let x = a.charCodeAt(index);
    let y = b.charCodeAt(index);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

const byId = (a: StoredPlant, b: StoredPlant): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const primary: Record<string, (a: StoredPlant, b: StoredPlant) => number> = {
  id: () => 0,
  name: (a, b) => compareCodePoints(searchKey(a.name), searchKey(b.name)) || compareCodePoints(a.name, b.name),
  createdAt: (a, b) => compareCodePoints(a.createdAt, b.createdAt),
  updatedAt: (a, b) => compareCodePoints(a.updatedAt, b.updatedAt),
};

/** The comparison the service sorts a list by. */
export function comparePlants(sort: PlantSort = 'id'): (a: StoredPlant, b: StoredPlant) => number {
  const descending = sort.startsWith('-');
  const first = primary[descending ? sort.slice(1) : sort] ?? primary.id;
  return (a, b) => {
    const order = (first as (a: StoredPlant, b: StoredPlant) => number)(a, b) || byId(a, b);
    return descending ? -order : order;
  };
}

/** Whether a plant is in a list of this query: its tag is `tag`, and its name contains `q` by searchKey. */
export const matchesQuery = (query: Pick<PlantQuery, 'q' | 'tag'>, plant: StoredPlant): boolean =>
  (query.tag === undefined || plant.tag === query.tag) && (query.q === undefined || searchKey(plant.name).includes(searchKey(query.q)));
