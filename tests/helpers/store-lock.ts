import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestApp } from './test-app';

/**
 * Another session holding the plants table's write lock, on either store: creates then wait for it (SQLite:
 * retried on timers up to DATABASE_BUSY_TIMEOUT_MS; PostgreSQL: up to DATABASE_STATEMENT_TIMEOUT_MS), which keeps
 * them in progress for as long as a test needs. release() ends the lock. `blocks`: on PostgreSQL, 'all' blocks
 * reads of the table too, 'writes' only writes (SQLite's lock never blocks reads in WAL).
 */
export async function lockPlants(app: TestApp, blocks: 'all' | 'writes' = 'all'): Promise<{ release: () => Promise<void> }> {
  if (app.store === 'sqlite') {
    const locker = new Database(app.dbPath);
    locker.exec('BEGIN IMMEDIATE');
    return {
      release: () => {
        locker.exec('ROLLBACK');
        locker.close();
        return Promise.resolve();
      },
    };
  }
  const locker = new pg.Client({ connectionString: app.dbPath });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE plants IN ${blocks === 'all' ? 'ACCESS EXCLUSIVE' : 'SHARE ROW EXCLUSIVE'} MODE`);
  return {
    release: async () => {
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}
