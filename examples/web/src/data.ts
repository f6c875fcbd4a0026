/**
 * The app's one door to the service: the client, the query keys, the queries and mutations TanStack Query runs,
 * and the live feed that keeps cached lists and plants current. Components import from here and never from
 * @plant-store/client, so what the client offers changes this file only. Query keys hold ids as decimal strings:
 * TanStack hashes keys with JSON.stringify, which throws on a bigint; the data keeps ids as bigint.
 */
import { createClient, newPlantId, PlantStoreError, type PlantPatch, type PlantSort, type PlantStoreClient, type StoredPlant, type Versioned } from '@plant-store/client';
import { infiniteQueryOptions, queryOptions, useInfiniteQuery, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState } from 'react';

export { newPlantId, PlantStoreError, type PlantStoreClient, type StoredPlant };

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
export type LiveStatus = { state: 'connecting' | 'live' } | { state: 'stopped'; error: unknown };

export function connect(token: string): PlantStoreClient {
  return createClient({ baseUrl: BASE_URL, token });
}

const ClientContext = createContext<PlantStoreClient | undefined>(undefined);
export const ClientProvider = ClientContext.Provider;

function useClient(): PlantStoreClient {
  const client = useContext(ClientContext);
  if (client === undefined) throw new Error('useClient outside ClientProvider');
  return client;
}

export const keys = {
  all: ['plants'] as const,
  lists: () => [...keys.all, 'list'] as const,
  list: (query: PlantQuery) => [...keys.lists(), { q: query.q ?? '', sort: query.sort }] as const,
  plant: (id: bigint) => [...keys.all, 'plant', id.toString()] as const,
};

function listOptions(client: PlantStoreClient, query: PlantQuery) {
  return infiniteQueryOptions({
    queryKey: keys.list(query),
    // The first page asks for the count; the next ones follow the service's Link (`next`), which keeps q and sort.
    queryFn: ({ pageParam, signal }) => client.listPlants(pageParam === undefined ? { ...query, limit: PAGE_SIZE, count: true } : { next: pageParam }, { signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.next,
  });
}

function plantOptions(client: PlantStoreClient, id: bigint) {
  return queryOptions({
    queryKey: keys.plant(id),
    queryFn: ({ signal }): Promise<PlantVersion> => client.getPlant(id, { signal }),
    // Structural sharing would keep an equal-looking older object, and with it the older ETag.
    structuralSharing: false,
  });
}

/** The sorted, filtered list as far as it is loaded, its total when the service counted it, and "load more". */
export function usePlantList(query: PlantQuery) {
  const list = useInfiniteQuery(listOptions(useClient(), query));
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
  return useQuery(plantOptions(useClient(), id));
}

export function useCreatePlant() {
  const client = useClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (plant: { id: bigint; name: string; tag?: string }) => client.createPlant(plant),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.lists() }),
  });
}

/** An edit of the version the form opened (`ifMatch`): a plant changed since answers 412 and is read again. */
export function useUpdatePlant() {
  const client = useClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, patch, ifMatch }: { id: bigint; patch: PlantPatch; ifMatch?: string }): Promise<PlantVersion> => client.updatePlant(id, patch, { ifMatch }),
    onSuccess: (stored) => {
      queryClient.setQueryData(keys.plant(stored.id), stored);
      return queryClient.invalidateQueries({ queryKey: keys.lists() });
    },
    onError: (error, { id }) => {
      if (error instanceof PlantStoreError && (error.status === 412 || error.status === 404)) return queryClient.invalidateQueries({ queryKey: keys.plant(id) });
    },
  });
}

export function useDeletePlant() {
  const client = useClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id }: { id: bigint }) => client.deletePlant(id),
    onSuccess: (_nothing, { id }) => {
      queryClient.removeQueries({ queryKey: keys.plant(id) });
      return queryClient.invalidateQueries({ queryKey: keys.lists() });
    },
  });
}

/**
 * Every change made elsewhere, applied to the cache while the app is signed in: a changed plant is set where it
 * is cached and the lists are read again. The first `open` reads them again too, so a change committed between
 * the first page and the stream is not lost; a `reset` (the feed lost track) does the same.
 */
function follow(client: PlantStoreClient, queryClient: QueryClient, onStatus: (status: LiveStatus) => void): () => void {
  const stop = new AbortController();
  void (async () => {
    try {
      for await (const change of client.changes({ signal: stop.signal })) {
        if (change.type === 'open') onStatus({ state: 'live' });
        else if (change.type === 'plant.deleted') queryClient.removeQueries({ queryKey: keys.plant(change.id) });
        else if (change.type !== 'reset' && queryClient.getQueryData(keys.plant(change.plant.id)) !== undefined) {
          queryClient.setQueryData<PlantVersion>(keys.plant(change.plant.id), change.plant);
        }
        void queryClient.invalidateQueries({ queryKey: keys.lists() });
      }
    } catch (error) {
      if (!stop.signal.aborted) onStatus({ state: 'stopped', error });
    }
  })();
  return () => stop.abort();
}

/** Follows the feed from mount to unmount; says whether changes made elsewhere are showing. */
export function useLiveChanges(): LiveStatus {
  const client = useClient();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>({ state: 'connecting' });
  useEffect(() => follow(client, queryClient, setStatus), [client, queryClient]);
  return status;
}
