/**
 * A resource's half of export and import, per dialect, as src/backup is handed it by its caller: the SQL that
 * reads and writes its records on the connection and in the transaction src/backup opened. src/backup keeps the
 * files, connections, migrations and transactions around it and never names what the records are.
 */
import type pg from 'pg';
import type { Db } from '../db/database.sqlite';
import type { Export, ImportResult, Lines } from '../transfer';

export type SqliteTransfer = {
  /** The table whose presence makes a file a migrated store of the resource. */
  table: string;
  /** The records of the snapshot `db` holds open (a read transaction); `close` runs when the pages end. */
  export: (db: Db, close: () => void) => Export;
  /**
   * Each line's record, in the caller's write transaction, its events numbered after `lastPos`, written at `at`;
   * `defaultTenant`: the tenant name (TENANT_DEFAULT) whose lines go to the shared tenant.
   */
  import: (db: Db, lines: Lines, lastPos: bigint, at: number, defaultTenant?: string) => Promise<ImportResult>;
};

export type PostgresTransfer = {
  /** The records of the snapshot `client` holds open (REPEATABLE READ); `close` runs when the pages end. */
  export: (client: pg.ClientBase, close: () => Promise<void>) => Promise<Export>;
  /** Each line's record, in the caller's transaction, written at `at`; `defaultTenant` as SqliteTransfer's. */
  import: (client: pg.ClientBase, lines: Lines, at: number, defaultTenant?: string) => Promise<ImportResult>;
};
