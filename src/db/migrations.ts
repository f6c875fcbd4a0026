import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The runner rules both dialects share: files named NNN-name.sql in migrations/<dialect>/, applied in name
 * order, each in its own transaction together with its record, recorded with its SHA-256 over normalised line
 * endings; an applied file that was edited stops the start. The dialect runners (migrate.sqlite.ts, migrate.postgres.ts) only know their SQL.
 */
export type Migration = Readonly<{ name: string; sql: string; checksum: string; crlfChecksum: string }>;

export const MIGRATIONS_ROOT = path.resolve(__dirname, '..', '..', 'migrations');

export class MigrationError extends Error {}

const MIGRATION_FILE = /^\d+-[\w-]+\.sql$/;

/** Reads migrations/<dialect>/NNN-*.sql, sorted by name: the number prefix sets the order. */
export function loadDialectMigrations(dir: string): Migration[] {
  // A file left at the top of migrations/ (from before the dialect folders) would silently never run.
  const stray = readdirSync(path.dirname(dir)).filter((file) => MIGRATION_FILE.test(file));
  if (path.dirname(dir) === MIGRATIONS_ROOT && stray.length > 0) {
    throw new MigrationError(`${stray.join(', ')} in migrations/: move each into migrations/sqlite/ or migrations/postgres/`);
  }
  return readdirSync(dir)
    .filter((file) => MIGRATION_FILE.test(file))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name), 'utf8');
      // Over normalised line endings, as Flyway does: a checkout that turns LF into CRLF is not an edit. A
      // database that recorded the CRLF form (applied from such a checkout before) matches crlfChecksum.
      const normalised = sql.replace(/\r\n?/g, '\n');
      return { name, sql, checksum: sha256(normalised), crlfChecksum: sha256(normalised.replace(/\n/g, '\r\n')) };
    });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const sameFile = (recorded: string | undefined, migration: Migration) =>
  recorded === migration.checksum || recorded === migration.crlfChecksum;

/** Throws if a migration recorded as applied has another checksum than its file; returns the pending ones. */
export function pendingMigrations(migrations: readonly Migration[], applied: ReadonlyMap<string, string>): Migration[] {
  for (const migration of migrations) {
    const checksum = applied.get(migration.name);
    if (checksum !== undefined && !sameFile(checksum, migration)) {
      throw new MigrationError(
        `migration ${migration.name} was edited after it was applied (checksum ${checksum.slice(0, 12)}… in the database, ` +
          `${migration.checksum.slice(0, 12)}… on disk); restore the file and add a new migration instead`,
      );
    }
  }
  return migrations.filter((migration) => !applied.has(migration.name));
}

/** True when every known migration is recorded as applied with the same checksum. */
export function allApplied(migrations: readonly Migration[], applied: ReadonlyMap<string, string>): boolean {
  return migrations.every((migration) => sameFile(applied.get(migration.name), migration));
}
