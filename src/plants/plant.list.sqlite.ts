/**
 * GET /plants on SQLite: one statement per shape of query (sort, tag, q, a start or none), prepared on first use;
 * the page, the count and the feed position read in one read transaction, so all three are one snapshot. Text
 * compares by SQLite's BINARY collation: memcmp of UTF-8, code point order. q is instr() on name_key: a plain
 * substring, with no LIKE pattern characters to escape. No search index: q scans, in the order's index, the
 * narrowest entries that hold name_key (migrations/sqlite/011: the covering plants_by_name for the name order,
 * plants_by_id_key for the id order and a count). SQL only.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../db/database.sqlite';
import type { TenantKey } from '../tenant';
import { plantJsonSqlite } from './plant.json';
import { isIdSort, type PlantListQuery } from './plant.list-query';
import { idBound, keysOf, orderOf, type Order } from './plant.list-order';
import type { PlantsPage } from './plant.repository';

const PLANT_JSON = plantJsonSqlite();
// Every plant's text starts with its id: {"id":<digits>,…
const ID_START = '{"id":'.length;
const idOf = (json: string): bigint => BigInt(json.slice(ID_START, json.indexOf(',', ID_START)));

type Shape = { order: Order; tag: boolean; search: boolean; start: boolean };

/**
 * A tag's plants from plants_by_tag, whatever the order, as before tenants: without statistics the planner takes
 * the leading `tenant = ?` of every index as selective and would walk the tenant's whole order index instead,
 * testing the tag on each entry (tests/store/tenant-migration-sqlite.test.ts holds every shape's plan).
 */
const source = (tag: boolean): string => (tag ? 'plants INDEXED BY plants_by_tag' : 'plants');

/** Every page and count reads inside one tenant, first: each index leads with it (migrations/sqlite/012). */
function filters({ tag, search }: Pick<Shape, 'tag' | 'search'>): string[] {
  const where: string[] = ['tenant = ?'];
  if (tag) where.push('tag = ?');
  if (search) where.push('instr(name_key, ?) > 0');
  return where;
}

/** The page's statement: for id orders a bound on the id always (the first page from the end of int64). */
function pageSql(shape: Shape): string {
  const { columns, descending } = shape.order;
  const where = filters(shape);
  const byId = columns.length === 1;
  if (byId) where.push(descending ? 'id <= ?' : 'id >= ?');
  else if (shape.start) where.push(`(${columns.join(', ')}) ${descending ? '<' : '>'} (${columns.map(() => '?').join(', ')})`);
  const direction = descending ? ' DESC' : '';
  const conditions = ` WHERE ${where.join(' AND ')}`;
  // A q in id order without a tag: the page's ids from the narrow plants_by_id_key (a co-routine the planner walks
  // in id order), then only their rows. Read from the table, the scan would decode every row it passes.
  if (byId && shape.search && !shape.tag) {
    return (
      `SELECT ${PLANT_JSON} FROM (SELECT tenant AS match_tenant, id AS match_id FROM plants${conditions} ORDER BY id${direction} LIMIT ?) ` +
      `JOIN plants ON plants.tenant = match_tenant AND plants.id = match_id ORDER BY match_id${direction}`
    );
  }
  return `SELECT ${PLANT_JSON} FROM ${source(shape.tag)}${conditions} ORDER BY ${columns.map((column) => column + direction).join(', ')} LIMIT ?`;
}

export class SqlitePlantList {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly snapshot: Database.Transaction<(tenant: TenantKey, query: PlantListQuery) => PlantsPage>;

  /** `position`: the last feed position written, read on the same connection. */
  constructor(
    private readonly db: Db,
    position: () => bigint,
  ) {
    // A deferred transaction: its snapshot starts at the first read and holds for the page, count and position.
    this.snapshot = db.transaction((tenant: TenantKey, query: PlantListQuery) => {
      const page = this.page(tenant, query);
      if (query.count === true) page.total = this.count(tenant, query);
      page.position = position();
      return page;
    });
  }

  /** The tenant's page of `query`. */
  read(tenant: TenantKey, query: PlantListQuery): PlantsPage {
    return this.snapshot(tenant, query);
  }

  private statement(key: string, sql: () => string): Database.Statement {
    let statement = this.statements.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(sql());
      this.statements.set(key, statement);
    }
    return statement;
  }

  private page(tenant: TenantKey, query: PlantListQuery): PlantsPage {
    const sort = query.sort ?? 'id';
    const order = orderOf(sort);
    const shape: Shape = { order, tag: query.tag !== undefined, search: query.search !== undefined, start: query.from !== undefined };
    const key = `${sort}|${shape.tag}|${shape.search}|${shape.start}`;
    const statement = this.statement(key, () => pageSql(shape));
    const values: unknown[] = [tenant];
    if (query.tag !== undefined) values.push(query.tag);
    if (query.search !== undefined) values.push(query.search);
    if (isIdSort(sort)) {
      const bound = idBound(query.after, order.descending);
      if (bound === undefined) return { json: '[]', position: 0n };
      values.push(bound);
    } else if (query.from !== undefined) values.push(...query.from);
    // One row more than the page: when it comes back, another page follows.
    values.push(query.limit + 1);
    return isIdSort(sort) ? this.idPage(statement, values, query.limit) : this.keyedPage(statement, values, query.limit, order, tenant);
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

  private keyedPage(statement: Database.Statement, values: unknown[], limit: number, order: Order, tenant: TenantKey): PlantsPage {
    const plants = statement.pluck().all(...values) as string[];
    const more = plants.length > limit;
    if (more) plants.length = limit;
    const page: PlantsPage = { json: `[${plants.join(',')}]`, position: 0n };
    const last = plants[plants.length - 1];
    if (more && last !== undefined) {
      const id = idOf(last);
      const { name, createdAt, updatedAt } = JSON.parse(last) as { name: string; createdAt: string; updatedAt: string };
      // The last plant's stored name key, read by its id in the page's snapshot: a second column on every row
      // of the page cost a deep page by name a third more than one by id.
      const nameKey = this.statement('name_key', () => 'SELECT name_key FROM plants WHERE tenant = ? AND id = ?').pluck().get(tenant, id) as string;
      page.nextKeys = keysOf(order, { id, name, nameKey, createdAt, updatedAt });
    }
    return page;
  }

  private count(tenant: TenantKey, query: PlantListQuery): number {
    const shape = { tag: query.tag !== undefined, search: query.search !== undefined };
    const where = filters(shape);
    const statement = this.statement(`count|${shape.tag}|${shape.search}`, () => `SELECT count(*) FROM ${source(shape.tag)} WHERE ${where.join(' AND ')}`);
    const values = [tenant, query.tag, query.search].filter((value) => value !== undefined);
    return Number(statement.pluck().get(...values));
  }
}
