/**
 * What the TanStack entry does to cached data: one change of the feed applied to every cached list it concerns
 * (a page, or the pages of an infinite list, each a sorted window) and to the cached plant. Only types come from
 * @tanstack/query-core: the QueryClient is the app's own.
 */
import type { InfiniteData, QueryClient, QueryKey } from '@tanstack/query-core';
import type { Page, PlantQuery } from './list.js';
import { comparePlants } from './order.js';
import type { StoredPlant } from './wire.js';
import { applyChange, type PlantChange } from './window.js';

export const ROOT = 'plant-store';
/** The query of a list key, ids as decimal strings (TanStack's key hashing throws on a bigint). */
export type KeyQuery = PlantQuery & { count?: boolean; after?: string; next?: string };
export type Filter = { q?: string; tag?: string };

/** A list's query from its key, when the key is one of ours. */
export const keyQuery = (key: QueryKey): KeyQuery | undefined => (key[0] === ROOT && (key[1] === 'list' || key[1] === 'infinite') ? (key[2] as KeyQuery) : undefined);

/** Whether a feed with this filter carries every change of this list: the same q and tag where the feed has one. */
export const covers = (filter: Filter, query: KeyQuery): boolean => (filter.q === undefined || filter.q === query.q) && (filter.tag === undefined || filter.tag === query.tag);

type Result = { plants: StoredPlant[]; delta: number | undefined };

/**
 * The change applied to a window whose end is its last plant when more pages follow; undefined when the change is
 * to that last plant itself, since the cached data would then no longer say where the next page's cursor starts.
 */
function applyTo(plants: StoredPlant[], more: boolean, change: PlantChange, query: KeyQuery): Result | undefined {
  const last = more ? plants.at(-1) : undefined;
  if (last !== undefined && last.id === (change.type === 'plant.deleted' ? change.id : change.plant.id)) return undefined;
  return applyChange(plants, change, query, comparePlants(query.sort), last);
}

const later = (position: bigint, change: PlantChange) => (change.position > position ? change.position : position);
const recount = (total: number | undefined, delta: number | undefined) => (total === undefined || delta === undefined ? total : total + delta);

/** A first page: its window is everything up to its last plant, as for loaded pages of one page. */
const applyToPage = (page: Page, change: PlantChange, query: KeyQuery): Page | undefined => applyToPages({ pages: [page], pageParams: [undefined] }, change, query)?.pages[0];

/** Loaded pages: one window, cut again into pages of the sizes they had (the last takes what changed). */
function applyToPages(data: InfiniteData<Page, string | undefined>, change: PlantChange, query: KeyQuery): InfiniteData<Page, string | undefined> | undefined {
  const last = data.pages.at(-1);
  if (last === undefined) return data;
  const applied = applyTo(
    data.pages.flatMap((page) => page.plants),
    last.next !== undefined,
    change,
    query,
  );
  if (applied === undefined || (data.pages[0]?.total !== undefined && applied.delta === undefined)) return undefined;
  const { plants, delta } = applied;
  let start = 0;
  const pages = data.pages.map((page, index) => {
    const end = index === data.pages.length - 1 ? plants.length : start + page.plants.length;
    const cut = { ...page, plants: plants.slice(start, end), position: later(page.position, change) };
    start = end;
    return index === 0 ? { ...cut, total: recount(page.total, delta) } : cut;
  });
  return { ...data, pages };
}

/**
 * Applies one change to one cached list; a list it cannot be placed in exactly is refetched instead. An
 * optimistic change (a mutation's, not yet stored) has no position and applies whatever the list's.
 */
export function applyToList(queryClient: QueryClient, queryKey: QueryKey, filter: Filter, change: PlantChange, optimistic = false): void {
  const listQuery = keyQuery(queryKey);
  const data = queryClient.getQueryData<Page | InfiniteData<Page, string | undefined>>(queryKey);
  if (listQuery === undefined || data === undefined || !covers(filter, listQuery)) return;
  // Already reflected: every page was read after the change.
  const positions = 'pages' in data ? data.pages.map((page) => page.position) : [data.position];
  if (!optimistic && positions.every((position) => change.position <= position)) return;
  // A page after the first has a window that starts somewhere unknown; a change to the window's last plant, or a
  // count the window cannot tell, is read again.
  const next = listQuery.after !== undefined || listQuery.next !== undefined ? undefined : 'pages' in data ? applyToPages(data, change, listQuery) : applyToPage(data, change, listQuery);
  if (next === undefined) void queryClient.invalidateQueries({ queryKey, exact: true });
  else queryClient.setQueryData(queryKey, next);
}

/** Applies one change to every cached list the filter covers, and to the cached plant. */
export function applyToCache(queryClient: QueryClient, filter: Filter, change: PlantChange, optimistic = false): void {
  for (const query of queryClient.getQueryCache().findAll({ queryKey: [ROOT] })) applyToList(queryClient, query.queryKey, filter, change, optimistic);
  const plantKey = [ROOT, 'plant', String(change.type === 'plant.deleted' ? change.id : change.plant.id)];
  if (queryClient.getQueryData(plantKey) === undefined) return;
  if (change.type === 'plant.deleted') void queryClient.invalidateQueries({ queryKey: plantKey, exact: true });
  else queryClient.setQueryData(plantKey, change.plant);
}
