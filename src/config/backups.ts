// The service's own backups of its SQLite store, and the rule that PostgreSQL is backed up by its own tools.
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { duration, integer, type Parsed } from './fields';
import { storeVariables } from './store';

export const backupVariables = {
  BACKUP_DIR: z.string().optional().describe(
    'Directory of the backups the service takes of its SQLite store (docs/backups.md): every `BACKUP_INTERVAL` a checked copy `plants-<time>.db` with its `.meta.json` sidecar. Unset: none (`plant-store backup` still works). Refused with a PostgreSQL `DATABASE_URL`: use `pg_dump`.',
  ),
  BACKUP_INTERVAL: duration(1000, 7 * 24 * 3_600_000).prefault('1h').describe(
    'Time between two scheduled backups, a whole number with `ms`, `s`, `m` or `h`, at least 1 s; the first comes one interval after start.',
  ),
  BACKUP_KEEP: integer(1, 10_000).prefault('24').describe(
    'Scheduled backups kept in `BACKUP_DIR`; older ones are removed with their sidecars after each new one.',
  ),
  // Read, not owned: the store slice describes it.
  DATABASE_URL: storeVariables.DATABASE_URL,
};

function resolveBackup(env: Parsed<typeof backupVariables>) {
  if (env.BACKUP_DIR === undefined) return undefined;
  // PostgreSQL is backed up by its own tools (pg_dump, base backups); a file copy of it is not a backup.
  if (env.DATABASE_URL.dialect === 'postgres') {
    throw new ConfigError('BACKUP_DIR: the service backs up its SQLite store only; with PostgreSQL unset it and use pg_dump (docs/backups.md)');
  }
  return Object.freeze({ dir: path.resolve(env.BACKUP_DIR), intervalMs: env.BACKUP_INTERVAL, keep: env.BACKUP_KEEP });
}

/** `backup` is undefined when BACKUP_DIR is not set. */
export function backupSettings(env: Parsed<typeof backupVariables>) {
  return { backup: resolveBackup(env) };
}
