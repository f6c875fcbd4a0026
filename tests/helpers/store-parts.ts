import { plants, type PlantParts } from '../../src/plants';
import type { Store } from '../../src/store';

/** The plant repository a store built (src/plants/index.ts), to drive it without HTTP. */
export function plantRepository(store: Pick<Store, 'resources'>): PlantParts['repository'] {
  const mounted = store.resources.find(({ resource }) => resource === plants);
  if (mounted === undefined) throw new Error('the store holds no plant resource');
  return (mounted.parts as PlantParts).repository;
}
