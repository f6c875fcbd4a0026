import path from 'node:path';
import type { Db } from './database.sqlite';
import { allApplied, loadDialectMigrations, MIGRATIONS_ROOT, pendingMigrations, type Migration } from './migrations';

export { MigrationError, type Migration } from './migrations';

export const MIGRATIONS_DIR = path.join(MIGRATIONS_ROOT, 'sqlite');

/** Reads migrations/sqlite/NNN-*.sql, sorted by name: the number prefix sets the order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return loadDialectMigrations(dir);
}

function appliedChecksums(db: Db): Map<string, string> {
  const rows = db.prepare('SELECT name, checksum FROM schema_migrations').all() as { name: string; checksum: string }[];
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

/** Applies what is pending, each file and its record in one transaction; refuses if an applied file was edited. */
export function migrate(db: Db, migrations: readonly Migration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const pending = pendingMigrations(migrations, appliedChecksums(db));
  const record = db.prepare('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)');
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.name, migration.checksum, new Date().toISOString());
    }).immediate();
  }
  return pending.map((migration) => migration.name);
}

/** True when every known migration is recorded as applied; a cheap read for /readyz (throws if the store is unreachable). */
export function isMigrated(db: Db, migrations: readonly Migration[]): boolean {
  return allApplied(migrations, appliedChecksums(db));
}
