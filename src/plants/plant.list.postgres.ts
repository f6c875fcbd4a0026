/**
 * GET /plants on PostgreSQL: one statement per shape of query (sort, tag, q, a start or none, a count or none),
 * so the page, the count and the feed position (plant_event_counter, written in every change's transaction) are
 * read in one snapshot. Text compares COLLATE "C" (byte order of UTF-8: code point order, as SQLite's BINARY),
 * never by the database's collation; name_key, created_at and updated_at are COLLATE "C" columns, name is not.
 * q is strpos() on name_key: a plain substring; from 3 code points an escaped LIKE beside it lets the trigram
 * index narrow the rows, asked only when a probe of the order's first rows does not fill the page. Every read of
 * plants is inside the caller's tenant, `tenant = $1` first, so each order walks its tenant-leading index
 * (migrations/postgres/016) and the count counts the tenant's plants. SQL only.
 */
import type { TenantKey } from '../tenant';
import { selectMembers, type MemberColumns } from './plant.members';
import { isIdSort, type PlantListQuery } from './plant.list-query';
import { idBound, keysOf, orderOf, type Order, type SortColumn } from './plant.list-order';
import type { PlantsPage } from './plant.repository';

export type ListRow = { id: bigint | null; name_key: string | null; position: bigint; total?: bigint } & MemberColumns;
export type ListStatement = { name: string; text: string; values: unknown[] };
type Listed = ListRow & { id: bigint };
/** A page as rows: the store writes their JSON (plant.json.ts). */
export type RowsPage = Omit<PlantsPage, 'json'> & { plants: Listed[] };

const compared = (column: SortColumn) => (column === 'name' ? 'name COLLATE "C"' : column);
// The page's columns carry the members' names (created_at AS "createdAt").
const OUTPUT: Record<SortColumn, string> = { id: 'id', name_key: 'name_key', name: 'name COLLATE "C"', created_at: '"createdAt"', updated_at: '"updatedAt"' };

type Shape = { order: Order; idSort: boolean; tag: boolean; search: boolean; trigrams: boolean; start: boolean; count: boolean };

// The trigram index (migrations/postgres/011) serves a LIKE of 3 or more characters; shorter ones have no trigram.
const TRIGRAM = 3;
const likeOf = (search: string): string => `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
// A search's probe: the first rows of the order it reads before it asks the trigram index (docs/decisions/api.md,
// "The search index"). A q that at least one in PROBE_ROWS / 101 plants matches fills a default page from them.
export const PROBE_ROWS = 10_000;

/** A statement's pieces, its parameters numbered in the order `listStatement` pushes the values. */
type Parts = { tenant: string; tag?: string; search?: string; like?: string; start?: string; startOfPage?: string; limit: string; inner: string; outer: (table: string) => string };

function partsOf(shape: Shape): Parts {
  const { columns, descending } = shape.order;
  const direction = descending ? ' DESC' : '';
  let next = 0;
  const param = () => `$${(next += 1)}`;
  const parts: Omit<Parts, 'limit' | 'inner' | 'outer'> = { tenant: `tenant = ${param()}` };
  if (shape.tag) parts.tag = `tag = ${param()}`;
  if (shape.search) parts.search = `strpos(name_key, ${param()}) > 0`;
  // For the index only: LIKE's default escape is the backslash, and strpos above stays the exact test.
  if (shape.trigrams) parts.like = `name_key LIKE ${param()}`;
  if (shape.idSort) parts.start = parts.startOfPage = `id ${descending ? '<=' : '>='} ${param()}`;
  else if (shape.start) {
    const keys = columns.map(param).join(', ');
    const after = descending ? '<' : '>';
    parts.start = `(${columns.map(compared).join(', ')}) ${after} (${keys})`;
    parts.startOfPage = `(${columns.map((column) => OUTPUT[column]).join(', ')}) ${after} (${keys})`;
  }
  // With a tag, id pages lead with tag so the plan walks plants_by_tag (tag, id) in order.
  const inner = [...(shape.idSort && shape.tag ? ['tag'] : []), ...columns.map(compared)].map((column) => column + direction).join(', ');
  const outer = (table: string) => columns.map((column) => `${table}${OUTPUT[column]}${direction}`).join(', ');
  return { ...parts, limit: param(), inner, outer };
}

const where = (conditions: (string | undefined)[]) => {
  const present = conditions.filter((condition): condition is string => condition !== undefined);
  return present.length > 0 ? ` WHERE ${present.join(' AND ')}` : '';
};
const COLUMNS = () => `id, ${selectMembers()}, name_key`;

/**
 * The page's CTEs for a q of 3 or more code points. Without a count: a probe reads the first PROBE_ROWS of the
 * order (tag and start applied) and keeps the matches; when they fill the page, that is the page, else every
 * match, read through the trigram index, sorted. Each side runs only when its one-time filter holds. With a count:
 * every match is read once through the index, for the count and the page alike.
 */
function searchCtes(shape: Shape, parts: Parts): string {
  const { tenant, tag, search, like, start, startOfPage, limit, inner, outer } = parts;
  const matches = (bounded: boolean) => `matches AS MATERIALIZED (SELECT ${COLUMNS()} FROM plants${where([tenant, tag, search, like, bounded ? start : undefined])})`;
  if (shape.count) return `${matches(false)}, page AS (SELECT * FROM matches${where([startOfPage])} ORDER BY ${outer('')} LIMIT ${limit})`;
  const scanned = `SELECT ${COLUMNS()} FROM plants${where([tenant, tag, start])} ORDER BY ${inner} LIMIT ${PROBE_ROWS}`;
  const probed = '(SELECT count(*) FROM probe)';
  return (
    `probe AS MATERIALIZED (SELECT * FROM (${scanned}) AS scanned WHERE ${search} ORDER BY ${outer('')} LIMIT ${limit}), ${matches(true)}, ` +
    `page AS (SELECT * FROM probe WHERE ${probed} = ${limit} UNION ALL (SELECT * FROM matches WHERE ${probed} < ${limit} ORDER BY ${outer('')} LIMIT ${limit}))`
  );
}

/** The statement for a shape. */
function listSql(shape: Shape): string {
  const parts = partsOf(shape);
  const { tenant, tag, search, start, limit, inner, outer } = parts;
  const page = shape.trigrams ? searchCtes(shape, parts) : `page AS (SELECT ${COLUMNS()} FROM plants${where([tenant, tag, search, start])} ORDER BY ${inner} LIMIT ${limit})`;
  const total = !shape.count ? '' : shape.trigrams ? ', (SELECT count(*) FROM matches) AS total' : `, (SELECT count(*) FROM plants${where([tenant, tag, search])}) AS total`;
  // One row left-joined to the page, so the position (and count) come even when the page is empty; each is a
  // subquery evaluated once. Not the counter table itself in the join: without statistics on it the planner
  // estimated millions of rows, and the cost set off JIT compilation (300 ms a page).
  return (
    `WITH ${page} SELECT (SELECT last_pos FROM plant_event_counter) AS position${total}, page.* FROM (VALUES (1)) AS one (n) ` +
    `LEFT JOIN page ON true ORDER BY ${outer('page.')}`
  );
}

/** The statement for a query in a tenant, named by its shape (a prepared statement per shape). */
export function listStatement(tenant: TenantKey, query: PlantListQuery): ListStatement {
  const sort = query.sort ?? 'id';
  const idSort = isIdSort(sort);
  const order = orderOf(sort);
  const shape: Shape = {
    order,
    idSort,
    tag: query.tag !== undefined,
    search: query.search !== undefined,
    trigrams: query.search !== undefined && [...query.search].length >= TRIGRAM,
    start: query.from !== undefined,
    count: query.count === true,
  };
  const values: unknown[] = [tenant];
  if (query.tag !== undefined) values.push(query.tag);
  if (query.search !== undefined) values.push(query.search);
  if (shape.trigrams) values.push(likeOf(query.search as string));
  let limit = query.limit + 1;
  if (idSort) {
    const bound = idBound(query.after, order.descending);
    // Past the end of int64: a page of none, still read with its position and count.
    values.push(bound ?? 0n);
    if (bound === undefined) limit = 0;
  } else if (query.from !== undefined) values.push(...query.from);
  // One row more than the page: when it comes back, another page follows.
  values.push(limit);
  const name = `plants_list_tenant_${sort.replace('-', 'desc_')}${shape.tag ? '_tag' : ''}${shape.search ? (shape.trigrams ? '_qi' : '_q') : ''}${shape.start ? '_from' : ''}${shape.count ? '_count' : ''}`;
  return { name, text: listSql(shape), values };
}

/** The page from the statement's rows: the plants (the counter's row alone when none), the position, the total. */
export function pageOfRows(query: PlantListQuery, rows: ListRow[]): RowsPage {
  const first = rows[0];
  const plants = rows.filter((row): row is Listed => row.id !== null);
  const page: RowsPage = { plants, position: first?.position ?? 0n };
  if (query.count === true) page.total = Number(first?.total ?? 0n);
  if (plants.length <= query.limit) return page;
  plants.length = query.limit;
  const last = plants[plants.length - 1] as Listed;
  const sort = query.sort ?? 'id';
  if (isIdSort(sort)) page.nextAfter = last.id;
  else {
    page.nextKeys = keysOf(orderOf(sort), {
      id: last.id,
      name: last.name as string,
      nameKey: last.name_key as string,
      createdAt: last.createdAt as string,
      updatedAt: last.updatedAt as string,
    });
  }
  return page;
}
