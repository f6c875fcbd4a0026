/**
 * What a write is expected to do to the cache before the service answers, as a change of the feed: an edit of the
 * cached plant, a put (an edit of a cached plant, else a create), a delete, and each operation of a batch in turn.
 * Only types come from @tanstack/query-core: the QueryClient is the app's own.
 */
import type { QueryClient } from '@tanstack/query-core';
import { ROOT } from './tanstack-cache.js';
import { withEtag, type Versioned } from './etag.js';
import type { StoredPlant } from './wire.js';
import type { PlantChange } from './window.js';
import type { BatchOperation, NewPlant, PlantPatch, PutPlant } from './writes.js';

/** A plant not stored yet, with the times of now. */
export function createdChange(plant: NewPlant): PlantChange {
  const now = new Date().toISOString();
  return { type: 'plant.created', position: 0n, plant: { ...plant, id: BigInt(plant.id), createdAt: now, updatedAt: now } };
}

/** The cached plant (or its row in a cached list) with the patch applied, as an update change; none when nothing is cached. */
export function edited(queryClient: QueryClient, id: bigint, patch: PlantPatch): PlantChange | undefined {
  const cached: Versioned<StoredPlant> | undefined = queryClient.getQueryData<Versioned<StoredPlant>>([ROOT, 'plant', id.toString()]) ?? findInLists(queryClient, id);
  if (cached === undefined) return undefined;
  const { tag, ...rest } = { ...cached, ...(patch.name === undefined ? {} : { name: patch.name }), tag: patch.tag === undefined ? cached.tag : patch.tag };
  // The ETag stays on the optimistic plant: it is the version the edit is made against.
  const plant = withEtag(tag === null || tag === undefined ? rest : { ...rest, tag }, cached.etag);
  return { type: 'plant.updated', position: 0n, plant };
}

/** A put replaces a cached plant's name and tag (a tag left out is removed), and creates one that is not cached. */
export const putChange = (queryClient: QueryClient, id: bigint, plant: PutPlant): PlantChange =>
  edited(queryClient, id, { name: plant.name, tag: plant.tag ?? null }) ?? createdChange({ ...plant, id });

/** One operation of a batch, against the cache as the operations before it left it. */
export function operationChange(queryClient: QueryClient, operation: BatchOperation): PlantChange | undefined {
  if (operation.op === 'create') return createdChange(operation.plant);
  if (operation.op === 'update') return edited(queryClient, operation.id, operation.patch);
  if (operation.op === 'put') return putChange(queryClient, operation.id, operation.plant);
  return { type: 'plant.deleted', position: 0n, id: operation.id };
}

function findInLists(queryClient: QueryClient, id: bigint): StoredPlant | undefined {
  // Under our root: pages of a list, one page, or a plant (which has no plants).
  type Cached = { pages?: Cached[]; plants?: StoredPlant[] } | undefined;
  const pages = queryClient.getQueriesData<Cached>({ queryKey: [ROOT] }).flatMap(([, cached]) => cached?.pages ?? [cached]);
  return pages.flatMap((page) => page?.plants ?? []).find((plant) => plant.id === id);
}
