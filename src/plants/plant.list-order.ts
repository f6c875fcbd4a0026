/**
 * The columns each sort of GET /plants orders by, the id last, for both stores' SQL: name by its search key, ties
 * by the exact name, then id; the times by their RFC 3339 text (one width, so text order is time order), then id.
 * Each store compares the text by code point (SQLite BINARY; PostgreSQL COLLATE "C"), never by a collation.
 */
import { INT64_MAX, INT64_MIN, type Sort } from './plant.schemas';

export type SortColumn = 'id' | 'name_key' | 'name' | 'created_at' | 'updated_at';

export type Order = { columns: readonly SortColumn[]; descending: boolean };

const COLUMNS: Record<string, readonly SortColumn[]> = {
  id: ['id'],
  name: ['name_key', 'name', 'id'],
  createdAt: ['created_at', 'id'],
  updatedAt: ['updated_at', 'id'],
};

export function orderOf(sort: Sort): Order {
  const descending = sort.startsWith('-');
  return { columns: COLUMNS[descending ? sort.slice(1) : sort] as readonly SortColumn[], descending };
}

/** A page's last plant, for the next page's keys: its members as the answer wrote them, and its stored name key. */
export type LastRow = { id: bigint; name: string; nameKey: string; createdAt: string; updatedAt: string };

/** The keys a cursor keeps of the page's last plant, in the order's columns. */
export function keysOf(order: Order, last: LastRow): readonly [string, string, bigint] | readonly [string, bigint] {
  const first = order.columns[0];
  if (first === 'name_key') return [last.nameKey, last.name, last.id];
  return [first === 'created_at' ? last.createdAt : last.updatedAt, last.id];
}

/** Where an id page starts: past `after` in the order's direction; undefined when nothing can follow it. */
export function idBound(after: bigint | undefined, descending: boolean): bigint | undefined {
  if (after === undefined) return descending ? INT64_MAX : INT64_MIN;
  if (descending) return after === INT64_MIN ? undefined : after - 1n;
  return after === INT64_MAX ? undefined : after + 1n;
}
