/**
 * `@plant-store/client/tanstack`: TanStack Query (v5) options for the Plant Store. Keys carry ids as decimal
 * strings (TanStack's key hashing throws on a bigint) while the data keeps them as bigint; edits update the cache
 * at once and roll back on failure (a 412 from If-Match also refetches); `follow` applies the change feed to every
 * cached list and plant it concerns. Only types come from @tanstack/query-core (an optional peer): the app's own
 * QueryClient does the work, so this entry adds no copy of TanStack to a bundle.
 */
import type { QueryClient, QueryKey } from '@tanstack/query-core';
import { newIdempotencyKey } from './ids.js';
import type { CreatedPlant, NewPlant, PlantPatch, PlantStoreClient } from './index.js';
import type { ListQuery, Page, PlantQuery } from './list.js';
import { ROOT, applyToCache, applyToList, covers, keyQuery, type Filter, type KeyQuery } from './tanstack-cache.js';
import { createdChange, edited, operationChange, putChange } from './tanstack-writes.js';
import type { StoredPlant, Versioned } from './wire.js';
import type { PlantChange } from './window.js';
import type { BatchOperation, BatchResult, PutPlant, PutResult } from './writes.js';

export type { KeyQuery } from './tanstack-cache.js';
export type UpdateVariables = { id: bigint; patch: PlantPatch; /** Defaults to the cached plant's ETag. */ ifMatch?: string };
export type DeleteVariables = { id: bigint; ifMatch?: string };
/** A put is last write wins unless it carries `ifMatch` (or `ifNoneMatch: '*'`, create only). */
export type PutVariables = { id: bigint; plant: PutPlant; ifMatch?: string; ifNoneMatch?: '*' };
export type FollowOptions = Filter & { onError?: (error: unknown) => void };
/** What a mutation's onMutate kept: every cached list and plant as it was, to put back on failure. */
export type Rollback = { saved: [QueryKey, unknown][] };

// Events kept to apply again to a list that a refetch, read before them, has just replaced.
const KEPT_EVENTS = 500;

/** A key's query: undefined members left out (as JSON leaves them), `after` as its decimal string. */
const toKeyQuery = (query: ListQuery): KeyQuery => JSON.parse(JSON.stringify({ ...query, after: query.after?.toString() })) as KeyQuery;

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

/**
 * Each mutate()'s Idempotency-Key, by its variables object: onMutate runs once per mutate() and makes it; TanStack's
 * own `retry` calls mutationFn again with the same variables, so those tries send the same key and the write applies once.
 */
const keys = new WeakMap<object, string>();
const keyOf = (variables: object) => ({ idempotencyKey: keys.get(variables) });

/**
 * Every cached list and plant, kept; then each change applied to them as if the feed had brought it, in turn (each
 * read from the cache as the ones before it left it: a batch's update of a plant it created). A new key for the write.
 */
async function optimistic(queryClient: QueryClient, variables: object, changes: Iterable<PlantChange | undefined>): Promise<Rollback> {
  keys.set(variables, newIdempotencyKey());
  await queryClient.cancelQueries({ queryKey: [ROOT] });
  const saved = queryClient.getQueriesData({ queryKey: [ROOT] });
  for (const change of changes) if (change) applyToCache(queryClient, {}, change, true);
  return { saved };
}

/** A mutation's onError: every cached list and plant put back as onMutate kept them. */
const rollback = (queryClient: QueryClient) => (error: unknown, _variables: unknown, kept: Rollback | undefined): void => {
  for (const [key, data] of kept?.saved ?? []) queryClient.setQueryData(key, data);
  // A 412: someone changed the plant since it was read; show what is stored now.
  if ((error as { status?: unknown } | null)?.status === 412) void queryClient.invalidateQueries({ queryKey: [ROOT] });
};

/** The feed brings the real change to a follower; without one, the lists are read again. */
const settle = (shared: Shared, queryClient: QueryClient) => (shared.following > 0 ? undefined : queryClient.invalidateQueries({ queryKey: [ROOT] }));

function mutations(shared: Shared) {
  const { client } = shared;
  return {
    createMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'create'],
      mutationFn: (plant: NewPlant): Promise<Versioned<CreatedPlant>> => client.createPlant(plant, keyOf(plant)),
      onMutate: (plant: NewPlant) => optimistic(queryClient, plant, [createdChange(plant)]),
      onError: rollback(queryClient),
      onSuccess: () => settle(shared, queryClient),
    }),

    updateMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'update'],
      mutationFn: (variables: UpdateVariables): Promise<Versioned<StoredPlant>> =>
        client.updatePlant(variables.id, variables.patch, { ...keyOf(variables), ifMatch: variables.ifMatch ?? queryClient.getQueryData<Versioned<StoredPlant>>(plantKeys.plant(variables.id))?.etag }),
      onMutate: (variables: UpdateVariables) => optimistic(queryClient, variables, [edited(queryClient, variables.id, variables.patch)]),
      onError: rollback(queryClient),
      onSuccess: (saved: Versioned<StoredPlant>) => {
        queryClient.setQueryData(plantKeys.plant(saved.id), saved);
        return settle(shared, queryClient);
      },
    }),

    deleteMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'delete'],
      mutationFn: (variables: DeleteVariables): Promise<void> => client.deletePlant(variables.id, { ...variables, ...keyOf(variables) }),
      onMutate: (variables: DeleteVariables) => optimistic(queryClient, variables, [{ type: 'plant.deleted', position: 0n, id: variables.id }]),
      onError: rollback(queryClient),
      onSuccess: (_nothing: void, { id }: DeleteVariables) => {
        queryClient.removeQueries({ queryKey: plantKeys.plant(id), exact: true });
        return settle(shared, queryClient);
      },
    }),

    putMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'put'],
      // putPlant reads ifMatch and ifNoneMatch from the variables and leaves the rest.
      mutationFn: (variables: PutVariables): Promise<PutResult> => client.putPlant(variables.id, variables.plant, { ...variables, ...keyOf(variables) }),
      onMutate: (variables: PutVariables) => optimistic(queryClient, variables, [putChange(queryClient, variables.id, variables.plant)]),
      onError: rollback(queryClient),
      onSuccess: () => settle(shared, queryClient),
    }),

    /** All or nothing: every operation shown at once, in order; a failed batch puts every list and plant back. */
    batchMutation: (queryClient: QueryClient) => ({
      mutationKey: [ROOT, 'batch'],
      mutationFn: (operations: readonly BatchOperation[]): Promise<BatchResult[]> => client.batch(operations, keyOf(operations)),
      // A generator: each operation's change is read from the cache as the ones before it left it.
      onMutate: (operations: readonly BatchOperation[]) => optimistic(queryClient, operations, (function* () {
        for (const operation of operations) yield operationChange(queryClient, operation);
      })()),
      onError: rollback(queryClient),
      onSuccess: () => settle(shared, queryClient),
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
      predicate: ({ queryKey }) => {
        const query = keyQuery(queryKey);
        return query === undefined ? queryKey[0] === ROOT && queryKey[1] === 'plant' : covers(filter, query);
      },
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
      if (change.type === 'open' || change.type === 'reset') {
        if (!opened || change.type === 'reset') void refetch();
        opened ||= change.type === 'open';
        continue;
      }
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
      // The query function's context goes on as the call's options: the call reads its signal only.
      queryFn: (context: { signal: AbortSignal }) => client.listPlants(query, context),
    }),

    /** Every page of a query as an infinite query; the first page carries `total` when `count`. */
    infiniteList: (query: PlantQuery & { count?: boolean } = {}) => ({
      queryKey: plantKeys.infiniteList(query),
      queryFn: (context: { signal: AbortSignal; pageParam: string | undefined }) => client.listPlants(context.pageParam === undefined ? query : { next: context.pageParam }, context),
      initialPageParam: undefined as string | undefined,
      getNextPageParam: (last: Page) => last.next,
    }),

    /** One plant; its ETag rides on it (structural sharing would copy it away, so it is off). */
    plant: (id: bigint) => ({
      queryKey: plantKeys.plant(id),
      queryFn: (context: { signal: AbortSignal }) => client.getPlant(id, context),
      structuralSharing: false,
    }),

    ...mutations(shared),

    follow: (queryClient: QueryClient, options: FollowOptions = {}) => follow(shared, queryClient, options),
  };
}
