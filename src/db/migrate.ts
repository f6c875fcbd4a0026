import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Db } from './database';

export type Migration = Readonly<{ name: string; sql: string; checksum: string; crlfChecksum: string }>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'migrations');

export class MigrationError extends Error {}

/** Reads migrations/NNN-*.sql, sorted by name: the number prefix sets the order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d+-[\w-]+\.sql$/.test(file))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name), 'utf8');
      // Over normalised line endings, as Flyway does: a checkout that turns LF into CRLF is not an edit. A
      // database that recorded the CRLF form (applied from such a checkout before) matches crlfChecksum.
      const normalised = sql.replace(/\r\n?/g, '\n');
      return { name, sql, checksum: sha256(normalised), crlfChecksum: sha256(normalised.replace(/\n/g, '\r\n')) };
    });
}

function appliedChecksums(db: Db): Map<string, string> {
  const rows = db.prepare('SELECT name, checksum FROM schema_migrations').all() as { name: string; checksum: string }[];
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

const sameFile = (recorded: string | undefined, migration: Migration) =>
  recorded === migration.checksum || recorded === migration.crlfChecksum;

/** Applies what is pending, each file and its record in one transaction; refuses if an applied file was edited. */
export function migrate(db: Db, migrations: readonly Migration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const applied = appliedChecksums(db);
  for (const migration of migrations) {
    const checksum = applied.get(migration.name);
    if (checksum !== undefined && !sameFile(checksum, migration)) {
      throw new MigrationError(
        `migration ${migration.name} was edited after it was applied (checksum ${checksum.slice(0, 12)}… in the database, ` +
          `${migration.checksum.slice(0, 12)}… on disk); restore the file and add a new migration instead`,
      );
    }
  }
  const record = db.prepare('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)');
  const pending = migrations.filter((migration) => !applied.has(migration.name));
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
  const applied = appliedChecksums(db);
  return migrations.every((migration) => sameFile(applied.get(migration.name), migration));
}
