import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { searchKey } from '../../src/plants/plant.schemas';

const ROOT = path.resolve(__dirname, '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli', 'plant-store.js');

export type CliRun = { code: number | null; stdout: string; stderr: string };

/** Runs the built command (dist/cli/plant-store.js) as an operator would, with only the environment given. */
export function startCli(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}

export function runCli(args: string[], env: Record<string, string> = {}, input?: string | Buffer): Promise<CliRun> {
  const child = startCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A command that refuses its input exits before reading it all, as it would in a shell pipe: not a failure here.
  child.stdin?.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  child.stdin?.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * A migrated store file with `count` plants (ids start..start+count-1, every third without a tag), written
 * directly: the arrange step of tests whose subject is the copy, not the create.
 */
/** The time seedStore gives its plants' createdAt and updatedAt. */
export const SEEDED_AT = '2026-01-02T03:04:05.006Z';

export function seedStore(file: string, count: number, start = 1): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  migrate(db, loadMigrations());
  // As the service stores a plant: its times and its name's search key beside it.
  const insert = db.prepare('INSERT INTO plants (id, name, tag, created_at, updated_at, name_key) VALUES (?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const name = `plant ${start + i}`;
      insert.run(BigInt(start + i), name, i % 3 === 0 ? null : `tag ${i % 7}`, SEEDED_AT, SEEDED_AT, searchKey(name));
    }
  })();
  db.close();
}

/** Every plant of a store file, ids as bigint, through a connection of its own. */
export function rowsOf(file: string): { id: bigint; name: string; tag: string | null }[] {
  const db = new Database(file, { fileMustExist: true });
  db.defaultSafeIntegers(true);
  try {
    return db.prepare('SELECT id, name, tag FROM plants ORDER BY id').all() as { id: bigint; name: string; tag: string | null }[];
  } finally {
    db.close();
  }
}

/** The newest SQLite migration this build knows: what a backup of a store it migrated names. */
export const LATEST_MIGRATION = (loadMigrations().at(-1) as { name: string }).name;
