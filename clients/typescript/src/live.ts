/**
 * `@plant-store/client/live`: a list that stays current. It loads the first page of a query with its count and
 * its Feed-Position, follows the change feed from exactly that position with the same filter, and keeps the
 * sorted window of loaded pages current (a plant enters, moves, or leaves as its changes say); a `reset` from the
 * feed reloads. Framework-free: `subscribe` and `getSnapshot` fit React's useSyncExternalStore, Svelte stores,
 * Vue's shallowRef or plain DOM. It never edits plants, and holds no timer once closed.
 */
import type { PlantStoreClient } from './index.js';
import type { Page, PlantQuery } from './list.js';
import { comparePlants } from './order.js';
import { PlantStoreError, type StoredPlant } from './wire.js';
import { applyChange, type PlantChange } from './window.js';

export { comparePlants, matchesQuery, searchKey } from './order.js';

export type LiveStatus = 'loading' | 'live' | 'reloading' | 'error';
export type LiveSnapshot = {
  /** The loaded pages, in the query's order, with every change since applied. */
  plants: StoredPlant[];
  /** Every plant matching q and tag (not only those loaded). */
  total?: number;
  /** The last change these plants reflect. */
  position: bigint;
  status: LiveStatus;
  /** What made the status 'error' (it retries by itself unless no retry can mend it: a 4xx or a refused answer). */
  error?: unknown;
  hasMore: boolean;
  /** Loads the next page into the window; resolves when it is in (at once when there is none). */
  loadMore: () => Promise<void>;
};
export type LiveOptions = { onError?: (error: unknown) => void };
export type LivePlants = {
  /** Calls the listener with each new snapshot; answers the function that stops it. */
  subscribe: (listener: (snapshot: LiveSnapshot) => void) => () => void;
  /** The current snapshot: the same object until something changes. */
  getSnapshot: () => LiveSnapshot;
  close: () => void;
};

// Changes remembered for the pages not loaded yet, at most: past it, the next loadMore reloads instead.
const REMEMBERED = 10_000;
const MAX_RETRY_MS = 30_000;

const retryable = (error: unknown) => !(error instanceof PlantStoreError) || error.status === 429 || error.status >= 500;

type Counted = { position: bigint; delta: number | undefined };

/** One watcher's state. Each load starts a generation; whatever an older one still delivers is dropped. */
type Watch = {
  client: PlantStoreClient;
  query: PlantQuery;
  compare: (a: StoredPlant, b: StoredPlant) => number;
  onError?: (error: unknown) => void;
  listeners: Set<(snapshot: LiveSnapshot) => void>;
  snapshot: LiveSnapshot;
  generation: number;
  closed: boolean;
  feed: AbortController;
  /** The next page's address, and the last plant loaded (as it was then): the window ends there. */
  next?: string;
  boundary?: StoredPlant;
  more?: Promise<void>;
  retryMs: number;
  retryTimer?: ReturnType<typeof setTimeout>;
  /** The latest change of each plant the feed brought since the last page read: a page read before it is mended. */
  changed: Map<bigint, PlantChange>;
  forgotten: boolean;
  /** While a count is being made, the changes applied meanwhile; the position the total was counted at. */
  pending?: Counted[];
  countedAt: bigint;
};

function publish(watch: Watch, patch: Partial<LiveSnapshot>): void {
  watch.snapshot = { ...watch.snapshot, ...patch };
  for (const listener of watch.listeners) listener(watch.snapshot);
}

function fail(watch: Watch, run: number, error: unknown): void {
  if (run !== watch.generation || watch.closed) return;
  publish(watch, { status: 'error', error });
  watch.onError?.(error);
  if (!retryable(error)) return;
  watch.retryTimer = setTimeout(() => void load(watch, 'reloading'), watch.retryMs);
  watch.retryMs = Math.min(MAX_RETRY_MS, watch.retryMs * 2);
}

/** Where the window ends: after the last plant of the last page, or nowhere when no page follows. */
function take(watch: Watch, page: Page): void {
  watch.next = page.next;
  watch.boundary = page.next === undefined ? undefined : page.plants.at(-1);
  watch.changed.clear();
  watch.forgotten = false;
}

async function load(watch: Watch, status: 'loading' | 'reloading'): Promise<void> {
  const run = (watch.generation += 1);
  clearTimeout(watch.retryTimer);
  watch.feed.abort();
  watch.feed = new AbortController();
  const { signal } = watch.feed;
  watch.pending = undefined;
  if (watch.snapshot.status !== status) publish(watch, { status });
  try {
    const page = await watch.client.listPlants({ ...watch.query, count: true }, { signal });
    if (run !== watch.generation) return;
    take(watch, page);
    watch.retryMs = 500;
    watch.countedAt = page.position;
    publish(watch, { plants: page.plants, total: page.total, position: page.position, status: 'live', error: undefined, hasMore: watch.next !== undefined });
    void follow(watch, run, page.position, signal);
  } catch (error) {
    fail(watch, run, error);
  }
}

async function follow(watch: Watch, run: number, after: bigint, signal: AbortSignal): Promise<void> {
  const { q, tag } = watch.query;
  try {
    for await (const change of watch.client.changes({ after, q, tag, signal })) {
      if (run !== watch.generation) return;
      if (change.type === 'reset') return void load(watch, 'reloading');
      if (change.type !== 'open') apply(watch, run, change);
    }
  } catch (error) {
    fail(watch, run, error);
  }
}

function apply(watch: Watch, run: number, change: PlantChange): void {
  const applied = applyChange(watch.snapshot.plants, change, watch.query, watch.compare, watch.boundary);
  if (watch.next !== undefined) remember(watch, change);
  publish(watch, { plants: applied.plants, total: count(watch, run, { position: change.position, delta: applied.delta }), position: change.position });
}

function remember(watch: Watch, change: PlantChange): void {
  const id = change.type === 'plant.deleted' ? change.id : change.plant.id;
  watch.changed.delete(id);
  watch.changed.set(id, change);
  if (watch.changed.size <= REMEMBERED) return;
  watch.changed.clear();
  watch.forgotten = true;
}

/**
 * The total after a change: exact when the window tells what the change did; otherwise counted again (one
 * request at a time), adding what the changes after that count's position did.
 */
function count(watch: Watch, run: number, counted: Counted): number | undefined {
  const { total } = watch.snapshot;
  if (total === undefined || counted.position <= watch.countedAt) return total;
  if (watch.pending !== undefined) watch.pending.push(counted);
  else if (counted.delta === undefined) recount(watch, run, [counted]);
  return counted.delta === undefined || watch.pending !== undefined ? total : total + counted.delta;
}

function recount(watch: Watch, run: number, pending: Counted[]): void {
  watch.pending = pending;
  const { q, tag } = watch.query;
  watch.client.listPlants({ q, tag, limit: 1, count: true }, { signal: watch.feed.signal }).then(
    (page) => {
      if (run !== watch.generation) return;
      const later = (watch.pending ?? []).filter((each) => each.position > page.position);
      watch.countedAt = page.position;
      if (later.some((each) => each.delta === undefined)) return recount(watch, run, later);
      watch.pending = undefined;
      publish(watch, { total: later.reduce((sum, each) => sum + (each.delta as number), page.total as number) });
    },
    (error: unknown) => fail(watch, run, error),
  );
}

/** The next page, joined to the window; the changes the feed brought since that page was read, applied again. */
async function nextPage(watch: Watch): Promise<void> {
  if (watch.next === undefined || watch.snapshot.status !== 'live') return;
  if (watch.forgotten) return load(watch, 'reloading');
  const run = watch.generation;
  try {
    const page = await watch.client.listPlants({ next: watch.next }, { signal: watch.feed.signal });
    if (run !== watch.generation) return;
    const shown = new Set(watch.snapshot.plants.map((plant) => plant.id));
    let plants = [...watch.snapshot.plants, ...page.plants.filter((plant) => !shown.has(plant.id))];
    const replay = [...watch.changed.values()].filter((change) => change.position > page.position).sort((a, b) => (a.position < b.position ? -1 : 1));
    take(watch, page);
    for (const change of replay) plants = applyChange(plants, change, watch.query, watch.compare, watch.boundary).plants;
    if (watch.next !== undefined) for (const change of replay) remember(watch, change);
    publish(watch, { plants, hasMore: watch.next !== undefined });
  } catch (error) {
    fail(watch, run, error);
  }
}

export function watchPlants(client: PlantStoreClient, query: PlantQuery = {}, { onError }: LiveOptions = {}): LivePlants {
  const loadMore = (): Promise<void> => (watch.more ??= nextPage(watch).finally(() => (watch.more = undefined)));
  const watch: Watch = {
    client,
    query,
    compare: comparePlants(query.sort),
    onError,
    listeners: new Set(),
    snapshot: { plants: [], position: 0n, status: 'loading', hasMore: false, loadMore },
    generation: 0,
    closed: false,
    feed: new AbortController(),
    retryMs: 500,
    changed: new Map(),
    forgotten: false,
    countedAt: -1n,
  };
  void load(watch, 'loading');
  return {
    subscribe(listener) {
      watch.listeners.add(listener);
      return () => watch.listeners.delete(listener);
    },
    getSnapshot: () => watch.snapshot,
    close() {
      watch.closed = true;
      watch.generation += 1;
      clearTimeout(watch.retryTimer);
      watch.feed.abort();
      watch.listeners.clear();
    },
  };
}
