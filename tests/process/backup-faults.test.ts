import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { rowsOf, runCli, seedStore, startCli } from '../helpers/plant-store-cli';
import { tempDataDir } from '../helpers/server-process';

const temporaries = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('.plant-store-tmp-'));

/** A tmpfs of the given size, or undefined where this machine cannot mount one (not root, no capability). */
function smallDisk(dir: string, size: string): (() => void) | undefined {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return () => execFileSync('umount', [dir]);
}

describe('plant-store backup under faults', () => {
  it('when the backup is killed with SIGKILL midway, then nothing is under its name, and the next backup removes the temporary file', async () => {
    const dir = tempDataDir();
    const store = path.join(dir, 'plants.db');
    const backups = path.join(dir, 'backups');
    mkdirSync(backups);
    seedStore(store, 1_000_000);
    const child = startCli(['backup', '--to', path.join(backups, 'b.db')], { DATABASE_URL: `file:${store}` });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    // Killed as soon as the copy has begun: its temporary file exists.
    while (temporaries(backups).length === 0 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 1));
    child.kill('SIGKILL');

    expect(await exited).toBe('SIGKILL');
    expect(readdirSync(backups).filter((name) => !name.startsWith('.plant-store-tmp-'))).toEqual([]);
    const left = temporaries(backups);
    expect(left.length).toBeGreaterThan(0);

    const next = await runCli(['backup', '--to', path.join(backups, 'b.db')], { DATABASE_URL: `file:${store}` });

    expect(next.code).toBe(0);
    expect(next.stdout.split('\n').filter((line) => line.startsWith('removed '))).toEqual(
      left.map((name) => `removed ${name}, left by a backup that did not finish`),
    );
    expect(temporaries(backups)).toEqual([]);
    expect(readdirSync(backups).sort()).toEqual(['b.db', 'b.db.meta.json']);
    expect(rowsOf(path.join(backups, 'b.db')).length).toBe(1_000_000);
  }, 120_000);

  it('when the disk fills during the backup, then that backup fails with the reason, leaves nothing behind, and the store is untouched', async () => {
    const dir = tempDataDir();
    const store = path.join(dir, 'plants.db');
    const disk = path.join(dir, 'small-disk');
    seedStore(store, 100_000);
    const unmount = smallDisk(disk, '1m');
    if (unmount === undefined) {
      process.stdout.write('skipped: the disk-full case needs `mount -t tmpfs` (root); this machine refused it\n');
      return;
    }
    try {
      const run = await runCli(['backup', '--to', path.join(disk, 'b.db')], { DATABASE_URL: `file:${store}` });

      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^plant-store backup: copying .* failed \(SQLITE_FULL: database or disk is full\)\n$/);
      expect(readdirSync(disk)).toEqual([]);
      expect(rowsOf(store).length).toBe(100_000);
    } finally {
      unmount();
    }
  }, 60_000);

  it('when the target directory does not exist, then the backup says so and writes nothing', async () => {
    const dir = tempDataDir();
    seedStore(path.join(dir, 'plants.db'), 10);

    const run = await runCli(['backup', '--to', path.join(dir, 'gone', 'b.db')], { DATABASE_URL: `file:${path.join(dir, 'plants.db')}` });

    expect(run).toEqual({ code: 1, stdout: '', stderr: `plant-store backup: the directory ${path.join(dir, 'gone')} does not exist\n` });
    expect(existsSync(path.join(dir, 'gone'))).toBe(false);
  });

  it.each([
    ["the store's rollback journal", 'plants.db-journal', 'plants.db', '-journal'],
    ["the store's WAL", 'plants.db-wal', 'plants.db', '-wal'],
    ["the store's WAL index", 'plants.db-shm', 'plants.db', '-shm'],
    ['the journal of another database', 'other.db-journal', 'other.db', '-journal'],
    ['a WAL name in capitals (one file on a case-insensitive disk)', 'b.DB-WAL', 'b.DB', '-WAL'],
    ['the WAL index of a bare name', 'b-shm', 'b', '-shm'],
    ["a multi-database commit's super-journal", 'plants.db-mj0A1B2C9D3', 'plants.db', '-mj0A1B2C9D3'],
  ])('when --to names %s, then backup refuses naming the rule and writes nothing', async (_case, name, database, suffix) => {
    const dir = tempDataDir();
    const store = path.join(dir, 'plants.db');
    seedStore(store, 10);
    const before = readdirSync(dir).sort();

    const run = await runCli(['backup', '--to', path.join(dir, name)], { DATABASE_URL: `file:${store}` });

    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `plant-store backup: ${path.join(dir, name)} ends in ${suffix}, a name SQLite gives a file it keeps beside a database; ` +
        `opening ${path.join(dir, database)} would take it for that database's own and delete or overwrite it: ` +
        'a backup never takes a name ending in -journal, -wal, -shm or -mj…; give it another name\n',
    });
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(rowsOf(store)).toHaveLength(10);
  });
});
