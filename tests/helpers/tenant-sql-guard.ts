/**
 * The guard of docs/decisions/tests.md ("Tenants: every statement carries the tenant"): every statement a test app's store prepares (SQLite) or sends
 * (PostgreSQL) goes through tenantProblems first, and one that does not carry the tenant throws TenantSqlError
 * naming it, so the whole API suite on both stores is the inventory of statements. On with TENANT_SQL_GUARD=on
 * (off by default until both stores' SQL carries the tenant); a test's own SQL is marked `/* unchecked: test *\/`.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import type { Db } from '../../src/db/database.sqlite';
import type { Store } from '../../src/store';
import { assertTenantSql } from './tenant-sql';

// On: both stores' SQL carries the tenant. TENANT_SQL_GUARD=off shows what the HTTP suites alone would catch.
export const tenantSqlGuardOn = (): boolean => process.env.TENANT_SQL_GUARD !== 'off';

type Prepare = Db['prepare'];

const guardedPrepare = (prepare: Prepare): Prepare =>
  function (this: Db, source: string) {
    assertTenantSql(source);
    return prepare.call(this, source);
  } as Prepare;

/**
 * `build` makes the SQLite store over `db`: the app's connection checks every statement from now on (lists
 * prepare at first use), and any other connection the store opens while it is built (the outbox's writer)
 * checks the statements it prepares then.
 */
export function guardSqlite<T>(db: Db, build: () => T): T {
  if (!tenantSqlGuardOn()) return build();
  db.prepare = guardedPrepare(db.prepare.bind(db));
  const prototype = Database.prototype as unknown as { prepare: Prepare };
  const original = prototype.prepare;
  prototype.prepare = guardedPrepare(original);
  try {
    return build();
  } finally {
    prototype.prepare = original;
  }
}

type Query = (...args: unknown[]) => unknown;
const guarded = new WeakSet<object>();

// A violation answers the way a failed statement does: through the callback, or as a rejected promise.
function guardClient<C extends pg.ClientBase>(client: C): C {
  if (guarded.has(client)) return client;
  guarded.add(client);
  const query = client.query.bind(client) as Query;
  (client as unknown as { query: Query }).query = (...args: unknown[]) => {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    try {
      if (text !== undefined) assertTenantSql(text);
    } catch (caught) {
      const error = caught as Error;
      const callback = args.find((arg): arg is (err: unknown) => void => typeof arg === 'function');
      if (callback === undefined) return Promise.reject(error);
      process.nextTick(() => callback(error));
      return undefined;
    }
    return query(...args);
  };
  return client;
}

/** Every client the store's pool hands out (pool.query takes one too) checks every statement sent on it. */
export function guardPostgres(store: Store): Store {
  if (!tenantSqlGuardOn()) return store;
  const pool = (store as Store & { pool?: pg.Pool }).pool;
  if (pool === undefined) throw new Error('guardPostgres: the store has no pool');
  const connect = pool.connect.bind(pool) as (callback?: (err: Error | undefined, client: pg.PoolClient, done: () => void) => void) => unknown;
  (pool as unknown as { connect: unknown }).connect = (callback?: (err: Error | undefined, client: pg.PoolClient, done: () => void) => void) =>
    callback === undefined
      ? (connect() as Promise<pg.PoolClient>).then(guardClient)
      : connect((err, client, done) => callback(err, client === undefined ? client : guardClient(client), done));
  return store;
}
