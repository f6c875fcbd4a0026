import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openDatabase, type Db } from '../../src/db/database.sqlite';
import { SqliteHealth } from '../../src/db/health.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { SqlitePlantRepository } from '../../src/plants/plant.repository.sqlite';
import { guardSqlite } from '../helpers/tenant-sql-guard';

// The guard of the test apps (tests/helpers/tenant-sql-guard.ts) on SQLite's repository, built as the store builds
// it: on a connection whose prepare plants a mistake (by id without its tenant condition), the build is refused
// with TenantSqlError naming that statement.
const logger = pino({ level: 'silent' });
let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'plants-guard-'));
  db = openDatabase(path.join(dir, 'plants.db'), { busyTimeoutMs: 2000 });
  migrate(db, loadMigrations());
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
  delete process.env.TENANT_SQL_GUARD;
});

/**
 * Builds the repository under the guard, on or off, the error it threw or undefined. `planted`: the mistake is made
 * in the source the guard is handed, as a mistake in the store's code would be.
 */
function build(guard: 'on' | 'off', planted = false): Error | undefined {
  process.env.TENANT_SQL_GUARD = guard;
  try {
    guardSqlite(db, () => {
      if (planted) plantByIdMistake();
      return new SqlitePlantRepository(db, logger, new SqliteHealth(db, logger, 2000));
    });
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** From now on, the read by id reaches prepare without its tenant condition: the mistake a refactoring could make. */
function plantByIdMistake(): void {
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => prepare(/ AS json, version FROM plants /.test(source) ? source.replace(/\btenant = \? AND /, '') : source));
}

describe('the guard on SQLite', () => {
  it('when it is off, then every statement is prepared unchecked', () => {
    expect(build('off', true)).toBeUndefined();
  });

  it("when it is on, then the store's own statements pass", () => {
    expect(build('on')).toBeUndefined();
  });

  it('when the read by id lost its tenant condition, then the build is refused naming that statement', () => {
    const refused = build('on', true);

    expect(refused?.name).toBe('TenantSqlError');
    expect(refused?.message).toMatch(/plants read or written without a tenant condition/);
    expect(refused?.message).toMatch(/statement: SELECT .* AS json, version FROM plants WHERE /);
  });
});
