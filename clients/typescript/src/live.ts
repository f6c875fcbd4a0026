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

export function watchPlants(client: PlantStoreClient, query: PlantQuery = {}, { onError }: LiveOptions = {}): LivePlants {
  const compare = comparePlants(query.sort);
  const listeners = new Set<(snapshot: LiveSnapshot) => void>();
  // Each load starts a generation; whatever an older one still delivers is dropped.
  let generation = 0;
  let closed = false;
  let feed = new AbortController();
  let next: string | undefined;
  let boundary: StoredPlant | undefined;
  let more: Promise<void> | undefined;
  let retryMs = 500;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  // The latest change of each plant the feed brought since the last page read: a page read before it is mended.
  const changed = new Map<bigint, PlantChange>();
  let forgotten = false;
  const counting = { pending: undefined as { position: bigint; delta: number | undefined }[] | undefined, countedAt: -1n };

  const loadMore = (): Promise<void> => (more ??= nextPage().finally(() => (more = undefined)));
  let snapshot: LiveSnapshot = { plants: [], position: 0n, status: 'loading', hasMore: false, loadMore };

  function publish(patch: Partial<LiveSnapshot>): void {
    snapshot = { ...snapshot, ...patch };
    for (const listener of listeners) listener(snapshot);
  }

  function fail(run: number, error: unknown): void {
    if (run !== generation || closed) return;
    publish({ status: 'error', error });
    onError?.(error);
    if (!retryable(error)) return;
    retryTimer = setTimeout(() => void load('reloading'), retryMs);
    retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
  }

  /** Where the window ends: after the last plant of the last page, or nowhere when no page follows. */
  function take(page: Page): void {
    next = page.next;
    boundary = next === undefined ? undefined : page.plants.at(-1);
    changed.clear();
    forgotten = false;
  }

  async function load(status: 'loading' | 'reloading'): Promise<void> {
    const run = (generation += 1);
    clearTimeout(retryTimer);
    feed.abort();
    feed = new AbortController();
    const { signal } = feed;
    counting.pending = undefined;
    if (snapshot.status !== status) publish({ status });
    try {
      const page = await client.listPlants({ ...query, count: true }, { signal });
      if (run !== generation) return;
      take(page);
      retryMs = 500;
      counting.countedAt = page.position;
      publish({ plants: page.plants, total: page.total, position: page.position, status: 'live', error: undefined, hasMore: next !== undefined });
      void follow(run, page.position, signal);
    } catch (error) {
      fail(run, error);
    }
  }

  async function follow(run: number, after: bigint, signal: AbortSignal): Promise<void> {
    try {
      for await (const change of client.changes({ after, q: query.q, tag: query.tag, signal })) {
        if (run !== generation) return;
        if (change.type === 'reset') return void load('reloading');
        if (change.type !== 'open') apply(run, change);
      }
    } catch (error) {
      fail(run, error);
    }
  }

  function apply(run: number, change: PlantChange): void {
    const applied = applyChange(snapshot.plants, change, query, compare, boundary);
    if (next !== undefined) remember(change);
    publish({ plants: applied.plants, total: count(run, change.position, applied.delta), position: change.position });
  }

  function remember(change: PlantChange): void {
    changed.delete(change.type === 'plant.deleted' ? change.id : change.plant.id);
    changed.set(change.type === 'plant.deleted' ? change.id : change.plant.id, change);
    if (changed.size <= REMEMBERED) return;
    changed.clear();
    forgotten = true;
  }

  /**
   * The total after a change: exact when the window tells what the change did; otherwise counted again (one
   * request at a time), adding what the changes after that count's position did.
   */
  function count(run: number, position: bigint, delta: number | undefined): number | undefined {
    const { total } = snapshot;
    if (total === undefined || position <= counting.countedAt) return total;
    if (counting.pending !== undefined) counting.pending.push({ position, delta });
    else if (delta === undefined) recount(run, [{ position, delta }]);
    return delta === undefined || counting.pending !== undefined ? total : total + delta;
  }

  function recount(run: number, pending: { position: bigint; delta: number | undefined }[]): void {
    counting.pending = pending;
    client.listPlants({ q: query.q, tag: query.tag, limit: 1, count: true }, { signal: feed.signal }).then(
      (page) => {
        if (run !== generation) return;
        const later = (counting.pending ?? []).filter((each) => each.position > page.position);
        counting.countedAt = page.position;
        if (later.some((each) => each.delta === undefined)) return recount(run, later);
        counting.pending = undefined;
        publish({ total: later.reduce((sum, each) => sum + (each.delta as number), page.total as number) });
      },
      (error: unknown) => fail(run, error),
    );
  }

  /** The next page, joined to the window; the changes the feed brought since that page was read, applied again. */
  async function nextPage(): Promise<void> {
    if (next === undefined || snapshot.status !== 'live') return;
    if (forgotten) return load('reloading');
    const run = generation;
    try {
      const page = await client.listPlants({ next }, { signal: feed.signal });
      if (run !== generation) return;
      const shown = new Set(snapshot.plants.map((plant) => plant.id));
      let plants = [...snapshot.plants, ...page.plants.filter((plant) => !shown.has(plant.id))];
      const replay = [...changed.values()].filter((change) => change.position > page.position).sort((a, b) => (a.position < b.position ? -1 : 1));
      take(page);
      for (const change of replay) plants = applyChange(plants, change, query, compare, boundary).plants;
      for (const change of replay) if (next !== undefined) remember(change);
      publish({ plants, hasMore: next !== undefined });
    } catch (error) {
      fail(run, error);
    }
  }

  void load('loading');
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    getSnapshot: () => snapshot,
    close() {
      closed = true;
      generation += 1;
      clearTimeout(retryTimer);
      feed.abort();
      listeners.clear();
    },
  };
}
