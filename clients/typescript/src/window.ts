/**
 * One change of the feed applied to a window of a sorted, filtered list: the pages loaded so far, which hold
 * every matching plant up to `boundary` (the last plant of the last page loaded, as it was then; the next page's
 * cursor continues after it), or every matching plant when no page follows (`boundary` undefined). The live list
 * and the TanStack cache share it. Pure: it returns a new array and never calls the service.
 */
import type { ChangeEvent } from './changes.js';
import type { PlantQuery } from './list.js';
import { matchesQuery } from './order.js';
import type { StoredPlant } from './wire.js';

export type PlantChange = Extract<ChangeEvent, { position: bigint; type: `plant.${string}` }>;
export type Compare = (a: StoredPlant, b: StoredPlant) => number;

export type Applied = {
  plants: StoredPlant[];
  /** What the change did to the count of matching plants: +1, −1 or 0; undefined when the window cannot tell. */
  delta: number | undefined;
  /** Whether the change concerns plants past the window (a later page, once loaded, may not show it yet). */
  beyond: boolean;
};

/** The index a plant goes to in a sorted array: after every plant that sorts at or before it. */
function insertionIndex(plants: readonly StoredPlant[], plant: StoredPlant, compare: Compare): number {
  let low = 0;
  let high = plants.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(plants[middle] as StoredPlant, plant) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Enter, move or leave: the plant's old row goes, and its new state goes in at its place when it matches the query
 * and sorts within the window. A filtered feed sends a plant that left the filter once, in its new state, which
 * this drops; a delete sends the id only.
 */
export function applyChange(plants: readonly StoredPlant[], change: PlantChange, query: PlantQuery, compare: Compare, boundary: StoredPlant | undefined): Applied {
  const id = change.type === 'plant.deleted' ? change.id : change.plant.id;
  const at = plants.findIndex((plant) => plant.id === id);
  const next = at < 0 ? plants.slice() : [...plants.slice(0, at), ...plants.slice(at + 1)];
  const complete = boundary === undefined;
  if (change.type === 'plant.deleted') {
    // A delete past the window may be of a plant that never matched (a filtered feed over-delivers some).
    return { plants: next, delta: at >= 0 ? -1 : complete ? 0 : undefined, beyond: at < 0 && !complete };
  }
  const matches = matchesQuery(query, change.plant);
  const within = complete || compare(change.plant, boundary) <= 0;
  if (matches && within) next.splice(insertionIndex(next, change.plant, compare), 0, change.plant);
  const after = matches ? 1 : 0;
  // Before the change it matched when it was shown, or (all pages loaded) not at all; a create never did.
  const before = at >= 0 ? 1 : complete || change.type === 'plant.created' ? 0 : undefined;
  return { plants: next, delta: before === undefined ? undefined : after - before, beyond: !within || (at < 0 && !complete) };
}
