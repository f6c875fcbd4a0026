/**
 * `@plant-store/client/tanstack`: TanStack Query (v5) options for the Plant Store. Keys carry ids as decimal
 * strings (TanStack's key hashing throws on a bigint) while the data keeps them as bigint; edits update the cache
 * at once and roll back on failure (a 412 from If-Match also refetches); `follow` applies the change feed to every
 * cached list and plant it concerns. Only types come from @tanstack/query-core (an optional peer): the app's own
 * QueryClient does the work, so this entry adds no copy of TanStack to a bundle.
 */
import type { InfiniteData, QueryClient, QueryKey } from '@tanstack/query-core';
import type { CreatedPlant, NewPlant, PlantPatch, PlantStoreClient } from './index.js';
import type { ListQuery, Page, PlantQuery } from './list.js';
import { ROOT, applyToCache, applyToList, covers, keyQuery, type Filter, type KeyQuery } from './tanstack-cache.js';
import { withEtag, type StoredPlant, type Versioned } from './wire.js';
import type { PlantChange } from './window.js';

export type { KeyQuery } from './tanstack-cache.js';
export type UpdateVariables = { id: bigint; patch: PlantPatch; /** Defaults to the cached plant's ETag. */ ifMatch?: string };
export type DeleteVariables = { id: bigint; ifMatch?: string };
export type FollowOptions = Filter & { onError?: (error: unknown) => void };
/** What a mutation's onMutate kept: every cached list and plant as it was, to put back on failure. */
export type Rollback = { saved: [QueryKey, unknown][] };

// Events kept to apply again to a list that a refetch, read before them, has just replaced.
const KEPT_EVENTS = 500;

/** A key's query: undefined members left out, `after` as its decimal string. */
function toKeyQuery({ after, ...rest }: ListQuery): KeyQuery {
  const query: KeyQuery = after === undefined ? { ...rest } : { ...rest, after: after.toString() };
  for (const name of Object.keys(query) as (keyof KeyQuery)[]) if (query[name] === undefined) delete query[name];
  return query;
}

const isStatus = (error: unknown, status: number) => (error as { status?: unknown } | null)?.status === status;

/** The keys of every query this entry makes; ids and `after` as decimal strings. */
export const plantKeys = {
  all: [ROOT] as const,
  lists: () => [ROOT, 'list'] as const,
  list: (query: ListQuery = {}) => [ROOT, 'list', toKeyQuery(query)] as const,
  infiniteLists: () => [ROOT, 'infinite'] as const,
  infiniteList: (query: PlantQuery & { count?: boolean } = {}) => [ROOT, 'infinite', toKeyQuery(query)] as const,
  plant: (id: bigint) => [ROOT, 'plant', id.toString()] as const,
};

/** What the options of one plantQueries share: the client, and how many follows run (a success then needs no refetch). */
type Shared = { client: PlantStoreClient; following: number };

/** Every cached list and plant, kept; then the change applied to them as if the feed had brought it. */
async function optimistic(queryClient: QueryClient, change: PlantChange | undefined): Promise<Rollback> {
  await queryClient.cancelQueries({ queryKey: [ROOT] });
  const saved = queryClient.getQueriesData({ queryKey: [ROOT] });
  if (change !== undefined) applyToCache(queryClient, {}, change, true);
  return { saved };
}

function rollback(queryClient: QueryClient, error: unknown, kept: Rollback | undefined): void {
  for (const [key, data] of kept?.saved ?? []) queryClient.setQueryData(key, data);
  // A 412: someone changed the plant since it was read; show what is stored now.
  if (isStatus(error, 412)) void queryClient.invalidateQueries({ queryKey: [ROOT] });
}

/** The feed brings the real change to a follower; without one, the lists are read again. */
const settle = (shared: Shared, queryClient: QueryClient) => (shared.following > 0 ? undefined : queryClient.invalidateQueries({ queryKey: [ROOT] }));

function mutations(shared: Shared) {
  const { client } = shared;
  return {
    createMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'create'],
      mutationFn: (plant: NewPlant): Promise<Versioned<CreatedPlant>> => client.createPlant(plant),
      onMutate: (plant: NewPlant) => {
        const now = new Date().toISOString();
        return optimistic(queryClient, { type: 'plant.created', position: 0n, plant: { ...plant, id: BigInt(plant.id), createdAt: now, updatedAt: now } });
      },
      onError: (error: unknown, _plant: NewPlant, kept: Rollback | undefined) => rollback(queryClient, error, kept),
      onSuccess: () => settle(shared, queryClient),
    }),

    updateMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'update'],
      mutationFn: ({ id, patch, ifMatch }: UpdateVariables): Promise<Versioned<StoredPlant>> =>
        client.updatePlant(id, patch, { ifMatch: ifMatch ?? queryClient.getQueryData<Versioned<StoredPlant>>(plantKeys.plant(id))?.etag }),
      onMutate: ({ id, patch }: UpdateVariables) => optimistic(queryClient, edited(queryClient, id, patch)),
      onError: (error: unknown, _variables: UpdateVariables, kept: Rollback | undefined) => rollback(queryClient, error, kept),
      onSuccess: (saved: Versioned<StoredPlant>) => {
        queryClient.setQueryData(plantKeys.plant(saved.id), saved);
        return settle(shared, queryClient);
      },
    }),

    deleteMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'delete'],
      mutationFn: ({ id, ifMatch }: DeleteVariables): Promise<void> => client.deletePlant(id, { ifMatch }),
      onMutate: ({ id }: DeleteVariables) => optimistic(queryClient, { type: 'plant.deleted', position: 0n, id }),
      onError: (error: unknown, _variables: DeleteVariables, kept: Rollback | undefined) => rollback(queryClient, error, kept),
      onSuccess: (_nothing: void, { id }: DeleteVariables) => {
        queryClient.removeQueries({ queryKey: plantKeys.plant(id), exact: true });
        return settle(shared, queryClient);
      },
    }),
  };
}

/**
 * Follows the change feed (with this filter) into the cache: every cached list it covers (same q and tag where the
 * filter has one) and every cached plant. Those lists and the cached plants are invalidated once it is connected,
 * so no change between their read and the feed is missed, and after a `reset`. Answers the function that stops it.
 */
function follow(shared: Shared, queryClient: QueryClient, { onError, ...filter }: FollowOptions = {}): () => void {
  const stop = new AbortController();
  const recent: PlantChange[] = [];
  const refetch = () =>
    queryClient.invalidateQueries({
      predicate: ({ queryKey }) => (queryKey[0] === ROOT && queryKey[1] === 'plant') || (keyQuery(queryKey) !== undefined && covers(filter, keyQuery(queryKey) as KeyQuery)),
    });
  // A list that a fetch replaced (read before some change already applied) gets those changes again.
  const unsubscribe = queryClient.getQueryCache().subscribe((event) => {
    if (event.type !== 'updated' || event.action.type !== 'success' || event.action.manual === true) return;
    for (const change of recent) applyToList(queryClient, event.query.queryKey as QueryKey, filter, change);
  });
  shared.following += 1;
  void (async () => {
    let opened = false;
    for await (const change of shared.client.changes({ ...filter, signal: stop.signal })) {
      if ((change.type === 'open' && !opened) || change.type === 'reset') void refetch();
      opened ||= change.type === 'open';
      if (change.type === 'open' || change.type === 'reset') continue;
      if (recent.push(change) > KEPT_EVENTS) recent.shift();
      applyToCache(queryClient, filter, change);
    }
  })().catch((error: unknown) => onError?.(error));
  return () => {
    shared.following -= 1;
    unsubscribe();
    stop.abort();
  };
}

export function plantQueries(client: PlantStoreClient) {
  const shared: Shared = { client, following: 0 };
  return {
    keys: plantKeys,

    /** One page (`after` or `next` for a later one), with `total` when `count`. */
    list: (query: ListQuery = {}) => ({
      queryKey: plantKeys.list(query),
      queryFn: ({ signal }: { signal: AbortSignal }) => client.listPlants(query, { signal }),
    }),

    /** Every page of a query as an infinite query; the first page carries `total` when `count`. */
    infiniteList: (query: PlantQuery & { count?: boolean } = {}) => ({
      queryKey: plantKeys.infiniteList(query),
      queryFn: ({ signal, pageParam }: { signal: AbortSignal; pageParam: string | undefined }) => client.listPlants(pageParam === undefined ? query : { next: pageParam }, { signal }),
      initialPageParam: undefined as string | undefined,
      getNextPageParam: (last: Page) => last.next,
    }),

    /** One plant; its ETag rides on it (structural sharing would copy it away, so it is off). */
    plant: (id: bigint) => ({
      queryKey: plantKeys.plant(id),
      queryFn: ({ signal }: { signal: AbortSignal }) => client.getPlant(id, { signal }),
      structuralSharing: false,
    }),

    ...mutations(shared),

    follow: (queryClient: QueryClient, options: FollowOptions = {}) => follow(shared, queryClient, options),
  };
}

/** The cached plant (or its row in a cached list) with the patch applied, as an update change; none when nothing is cached. */
function edited(queryClient: QueryClient, id: bigint, patch: PlantPatch): PlantChange | undefined {
  const key = [ROOT, 'plant', id.toString()];
  const cached: Versioned<StoredPlant> | undefined = queryClient.getQueryData<Versioned<StoredPlant>>(key) ?? findInLists(queryClient, id);
  if (cached === undefined) return undefined;
  const { tag, ...rest } = { ...cached, ...(patch.name === undefined ? {} : { name: patch.name }), tag: patch.tag === undefined ? cached.tag : patch.tag };
  // The ETag stays on the optimistic plant: it is the version the edit is made against.
  const plant = withEtag(tag === null || tag === undefined ? rest : { ...rest, tag }, cached.etag);
  return { type: 'plant.updated', position: 0n, plant };
}

function findInLists(queryClient: QueryClient, id: bigint): StoredPlant | undefined {
  for (const [, data] of queryClient.getQueriesData<Page | InfiniteData<Page>>({ queryKey: [ROOT] })) {
    const pages = data === undefined ? [] : 'pages' in data ? data.pages : 'plants' in data ? [data] : [];
    const found = pages.flatMap((page) => page.plants).find((plant) => plant.id === id);
    if (found !== undefined) return found;
  }
  return undefined;
}
