/**
 * GET /plants on SQLite: one statement per shape of query (sort, tag, q, a start or none), prepared on first use;
 * the page, the count and the feed position read in one read transaction, so all three are one snapshot. Text
 * compares by SQLite's BINARY collation: memcmp of UTF-8, code point order. q is instr() on name_key: a plain
 * substring, with no LIKE pattern characters to escape; from 3 code points the search index narrows it first.
 * SQL only.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../db/database.sqlite';
import { plantJsonSqlite } from './plant.json';
import { isIdSort, type PlantListQuery } from './plant.list-query';
import { idBound, keysOf, orderOf, type Order } from './plant.list-order';
import type { PlantsPage } from './plant.repository';

const PLANT_JSON = plantJsonSqlite();
// Every plant's text starts with its id: {"id":<digits>,…
const ID_START = '{"id":'.length;
const idOf = (json: string): bigint => BigInt(json.slice(ID_START, json.indexOf(',', ID_START)));

/** What picks the plants, whatever the order: `indexed`, the position the search index covers, when it serves. */
type Filter = { tag?: string; search?: string; indexed?: bigint };

type Shape = { order: Order; tag: boolean; search: boolean; indexed: boolean; start: boolean };

// The search index (plant.search.sqlite.ts) holds trigrams: a q of fewer code points scans.
const TRIGRAM = 3;
const phraseOf = (search: string): string => `"${search.replaceAll('"', '""')}"`;

function filters({ tag, search, indexed }: Pick<Shape, 'tag' | 'search' | 'indexed'>): string[] {
  const where: string[] = [];
  if (tag) where.push('tag = ?');
  if (search) where.push('instr(name_key, ?) > 0');
  // The index narrows to the plants it holds the trigrams of, plus every plant changed after what it covers;
  // instr above stays the exact test.
  if (indexed) where.push('id IN (SELECT rowid FROM plants_search WHERE plants_search MATCH ? UNION SELECT plant_id FROM plant_events WHERE pos > ?)');
  return where;
}

function filterValues(filter: Filter): unknown[] {
  const values: unknown[] = [];
  if (filter.tag !== undefined) values.push(filter.tag);
  if (filter.search !== undefined) values.push(filter.search);
  if (filter.indexed !== undefined) values.push(phraseOf(filter.search as string), filter.indexed);
  return values;
}

/** The page's statement: for id orders a bound on the id always (the first page from the end of int64). */
function pageSql(shape: Shape): string {
  const { columns, descending } = shape.order;
  const where = filters(shape);
  const byId = columns.length === 1;
  if (byId) where.push(descending ? 'id <= ?' : 'id >= ?');
  else if (shape.start) where.push(`(${columns.join(', ')}) ${descending ? '<' : '>'} (${columns.map(() => '?').join(', ')})`);
  const direction = descending ? ' DESC' : '';
  const select = byId ? PLANT_JSON : `${PLANT_JSON}, name_key`;
  const conditions = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  return `SELECT ${select} FROM plants${conditions} ORDER BY ${columns.map((column) => column + direction).join(', ')} LIMIT ?`;
}

export class SqlitePlantList {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly snapshot: Database.Transaction<(query: PlantListQuery) => PlantsPage>;

  /**
   * `position`: the last feed position written; `indexedUpTo`: the position the search index covers, or undefined
   * while it cannot serve; both read on the same connection.
   */
  constructor(
    private readonly db: Db,
    position: () => bigint,
    indexedUpTo: () => bigint | undefined = () => undefined,
  ) {
    // A deferred transaction: its snapshot starts at the first read and holds for the page, count and position.
    this.snapshot = db.transaction((query: PlantListQuery) => {
      const filter: Filter = {};
      if (query.tag !== undefined) filter.tag = query.tag;
      if (query.search !== undefined) filter.search = query.search;
      const indexed = query.search !== undefined && [...query.search].length >= TRIGRAM ? indexedUpTo() : undefined;
      if (indexed !== undefined) filter.indexed = indexed;
      const page = this.page(query, filter);
      if (query.count === true) page.total = this.count(filter);
      page.position = position();
      return page;
    });
  }

  read(query: PlantListQuery): PlantsPage {
    return this.snapshot(query);
  }

  private statement(key: string, sql: () => string): Database.Statement {
    let statement = this.statements.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(sql());
      this.statements.set(key, statement);
    }
    return statement;
  }

  private page(query: PlantListQuery, filter: Filter): PlantsPage {
    const sort = query.sort ?? 'id';
    const order = orderOf(sort);
    const shape: Shape = { order, tag: filter.tag !== undefined, search: filter.search !== undefined, indexed: filter.indexed !== undefined, start: query.from !== undefined };
    const key = `${sort}|${shape.tag}|${shape.search}|${shape.indexed}|${shape.start}`;
    const statement = this.statement(key, () => pageSql(shape));
    const values = filterValues(filter);
    if (isIdSort(sort)) {
      const bound = idBound(query.after, order.descending);
      if (bound === undefined) return { json: '[]', position: 0n };
      values.push(bound);
    } else if (query.from !== undefined) values.push(...query.from);
    // One row more than the page: when it comes back, another page follows.
    values.push(query.limit + 1);
    return isIdSort(sort) ? this.idPage(statement, values, query.limit) : this.keyedPage(statement, values, query.limit, order);
  }

  private idPage(statement: Database.Statement, values: unknown[], limit: number): PlantsPage {
    const plants = statement.pluck().all(...values) as string[];
    const more = plants.length > limit;
    if (more) plants.length = limit;
    const last = plants[plants.length - 1];
    const page: PlantsPage = { json: `[${plants.join(',')}]`, position: 0n };
    if (more && last !== undefined) page.nextAfter = idOf(last);
    return page;
  }

  private keyedPage(statement: Database.Statement, values: unknown[], limit: number, order: Order): PlantsPage {
    const rows = statement.raw().all(...values) as [string, string][];
    const more = rows.length > limit;
    if (more) rows.length = limit;
    const page: PlantsPage = { json: `[${rows.map((row) => row[0]).join(',')}]`, position: 0n };
    const last = rows[rows.length - 1];
    if (more && last !== undefined) {
      const { name, createdAt, updatedAt } = JSON.parse(last[0]) as { name: string; createdAt: string; updatedAt: string };
      page.nextKeys = keysOf(order, { id: idOf(last[0]), name, nameKey: last[1], createdAt, updatedAt });
    }
    return page;
  }

  private count(filter: Filter): number {
    const shape = { tag: filter.tag !== undefined, search: filter.search !== undefined, indexed: filter.indexed !== undefined };
    const where = filters(shape);
    const key = `count|${shape.tag}|${shape.search}|${shape.indexed}`;
    const statement = this.statement(key, () => `SELECT count(*) FROM plants${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`);
    return Number(statement.pluck().get(...filterValues(filter)));
  }
}
