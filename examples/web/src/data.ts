/**
 * The app's one door to the service: the client and its TanStack Query entry, which gives the keys, the list and
 * plant queries, the mutations (with If-Match on edits, the cache updated at once and rolled back on failure) and
 * `follow`, the change feed applied to every cached list and plant. Components use the hooks here and never
 * import @plant-store/client, so what the client offers changes this file only.
 */
import { createClient, newPlantId, PlantStoreError, type BatchOperation, type PlantSort, type PlantStoreClient, type StoredPlant, type Versioned } from '@plant-store/client';
import { plantQueries } from '@plant-store/client/tanstack';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState } from 'react';

export { newPlantId, PlantStoreError, type BatchOperation, type StoredPlant };

// Same origin as the page: nginx serves this app at / and the service at /api/ (docker/nginx.conf).
const BASE_URL = '/api';
export const PAGE_SIZE = 10;

/** The service's orders (GET /plants `sort`), as a person reads them. */
export const SORTS = [
  ['-createdAt', 'Newest first'],
  ['createdAt', 'Oldest first'],
  ['name', 'Name, A to Z'],
  ['-name', 'Name, Z to A'],
  ['-updatedAt', 'Recently changed'],
  ['updatedAt', 'Least recently changed'],
  ['id', 'Id, ascending'],
  ['-id', 'Id, descending'],
] as const satisfies readonly (readonly [PlantSort, string])[];
export type Sort = PlantSort;
export type PlantQuery = { q?: string; sort: Sort };

/** A plant as read, with the ETag of that version in `etag` (off the enumerable members, so a spread drops it). */
export type PlantVersion = Versioned<StoredPlant>;
/** `live` from the start: follow() catches up from each list's own read, so nothing is missed while it connects. */
export type LiveStatus = { state: 'live' } | { state: 'stopped'; error: unknown };

export type PlantStore = { client: PlantStoreClient; queries: ReturnType<typeof plantQueries> };

export function connect(token: string): PlantStore {
  const client = createClient({ baseUrl: BASE_URL, token });
  return { client, queries: plantQueries(client) };
}

const StoreContext = createContext<PlantStore | undefined>(undefined);
export const StoreProvider = StoreContext.Provider;

function useStore(): PlantStore {
  const store = useContext(StoreContext);
  if (store === undefined) throw new Error('useStore outside StoreProvider');
  return store;
}

const useQueries = (): PlantStore['queries'] => useStore().queries;

/** The sorted, filtered list as far as it is loaded, its total (the first page asks for it), and "load more". */
export function usePlantList(query: PlantQuery) {
  const list = useInfiniteQuery(useQueries().infiniteList({ ...query, limit: PAGE_SIZE, count: true }));
  return {
    plants: list.data?.pages.flatMap((page) => page.plants) ?? [],
    total: list.data?.pages[0]?.total,
    pending: list.isPending,
    error: list.error,
    hasMore: list.hasNextPage,
    loadingMore: list.isFetchingNextPage,
    loadMore: () => void list.fetchNextPage(),
  };
}

export function usePlant(id: bigint) {
  return useQuery(useQueries().plant(id));
}

export function useCreatePlant() {
  return useMutation(useQueries().createMutation(useQueryClient()));
}

/** An edit of the version the form opened (`ifMatch`): a plant changed since answers 412, rolled back and read again. */
export function useUpdatePlant() {
  return useMutation(useQueries().updateMutation(useQueryClient()));
}

export function useDeletePlant() {
  return useMutation(useQueries().deleteMutation(useQueryClient()));
}

/**
 * A fresh read of one plant, with the ETag of the version stored now: what a selection acts on. Not the cached
 * plant: a row the app has just edited shows the edit before the service has it, with the ETag it was made against.
 */
export function useReadPlant(): (id: bigint) => Promise<PlantVersion> {
  const { client } = useStore();
  return (id) => client.getPlant(id);
}

/**
 * Many operations in one all-or-nothing batch, shown at once and rolled back on failure. A failure also reads the
 * lists again: the rollback puts back what was cached before the batch, which a change the feed brought while it
 * was in flight is not part of.
 */
export function useBatch() {
  const queryClient = useQueryClient();
  const queries = useQueries();
  const options = queries.batchMutation(queryClient);
  return useMutation({
    ...options,
    onError: (error: unknown, operations: readonly BatchOperation[], kept: Awaited<ReturnType<typeof options.onMutate>> | undefined) => {
      options.onError(error, operations, kept);
      void queryClient.invalidateQueries({ queryKey: queries.keys.all });
    },
  });
}

/**
 * The change feed into the cache from mount to unmount, unfiltered: one stream keeps every cached list current,
 * whatever its search, and a new search opens no connection.
 */
export function useLiveChanges(): LiveStatus {
  const queries = useQueries();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>({ state: 'live' });
  useEffect(() => {
    setStatus({ state: 'live' });
    return queries.follow(queryClient, { onError: (error) => setStatus({ state: 'stopped', error }) });
  }, [queries, queryClient]);
  return status;
}
