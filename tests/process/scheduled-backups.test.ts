import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scrape, valueOf } from '../helpers/metrics';
import { LATEST_MIGRATION, rowsOf, seedStore } from '../helpers/plant-store-cli';
import { freePort } from '../helpers/ports';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

const post = (server: ServerProcess, body: unknown) =>
  fetch(`${server.url}/plants`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

const written = (server: ServerProcess) => server.lines.filter((line) => line.msg === 'backup written');
const failed = (server: ServerProcess) => server.lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('backup failed'));

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A service over dir/plants.db backing up into `backups` every second, keeping 2, with its metrics listener. */
async function everySecondKeepingTwo(dir: string, backups: string): Promise<{ server: ServerProcess; metricsPort: number }> {
  const metricsPort = await freePort();
  const server = await startServer({
    DATABASE_URL: `file:${path.join(dir, 'plants.db')}`,
    BACKUP_DIR: backups,
    BACKUP_INTERVAL: '1s',
    BACKUP_KEEP: '2',
    METRICS_PORT: String(metricsPort),
  });
  return { server, metricsPort };
}

describe('scheduled backups (BACKUP_DIR)', () => {
  it('when BACKUP_DIR is set, then a checked backup is written every interval, the newest BACKUP_KEEP kept, logged and measured', async () => {
    const dir = tempDataDir();
    const backups = path.join(dir, 'backups');
    mkdirSync(backups);
    const { server, metricsPort } = await everySecondKeepingTwo(dir, backups);
    try {
      expect((await post(server, { id: 42, name: 'kept safe' })).status).toBe(200);

      await until(() => written(server).length >= 3);
      const scraped = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
      const files = readdirSync(backups).sort();
      const last = written(server).at(-1) as Record<string, unknown>;

      expect(server.lines.find((line) => line.msg === 'backups scheduled')).toMatchObject({ level: 30, dir: backups, intervalMs: 1000, keep: 2 });
      expect(files).toHaveLength(4);
      expect(files.filter((name) => /^plants-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.db$/.test(name))).toHaveLength(2);
      expect(files.filter((name) => name.endsWith('.db.meta.json'))).toHaveLength(2);
      expect(last).toMatchObject({ level: 30, plants: 1, migration: LATEST_MIGRATION, bytes: statSync(last.file as string).size });
      expect(written(server)[2]?.pruned).toEqual([path.basename(written(server)[0]?.file as string)]);
      expect(rowsOf(last.file as string)).toEqual([{ id: 42n, name: 'kept safe', tag: null }]);
      expect(valueOf(scraped, 'plants_backup_failures_total')).toBe(0);
      expect(valueOf(scraped, 'plants_backup_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(valueOf(scraped, 'plants_backup_last_size_bytes')).toBeGreaterThan(0);
      expect(valueOf(scraped, 'plants_backup_last_duration_seconds')).toBeGreaterThan(0);
      expect(valueOf(scraped, 'plants_backup_future_files')).toBe(0);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('when backups named later than now are in BACKUP_DIR, then each new backup stays, the later ones are left alone and not counted, and the log and a gauge say so', async () => {
    const dir = tempDataDir();
    const backups = path.join(dir, 'backups');
    mkdirSync(backups);
    const ahead = ['plants-2090-01-01T00-00-00-000Z.db', 'plants-2091-01-01T00-00-00-000Z.db', 'plants-2092-01-01T00-00-00-000Z.db'];
    const past = 'plants-2001-01-01T00-00-00-000Z.db';
    for (const name of [...ahead, past]) {
      writeFileSync(path.join(backups, name), `a backup copied in: ${name}`);
      writeFileSync(path.join(backups, `${name}.meta.json`), '{}');
    }
    const { server, metricsPort } = await everySecondKeepingTwo(dir, backups);
    let scraped;
    try {
      expect((await post(server, { id: 42, name: 'kept safe' })).status).toBe(200);
      await until(() => written(server).length >= 3);
      scraped = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    } finally {
      await server.stop();
    }
    const runs = written(server);
    const names = runs.map((line) => path.basename(line.file as string));
    const last = runs.at(-1) as Record<string, unknown>;

    expect(runs.slice(0, 3).map((line) => line.pruned)).toEqual([[], [past], [names[0]]]);
    expect(readdirSync(backups).filter((name) => name.endsWith('.db')).sort()).toEqual([...names.slice(-2), ...ahead]);
    expect(rowsOf(last.file as string)).toEqual([{ id: 42n, name: 'kept safe', tag: null }]);
    expect(server.lines.filter((line) => line.level === 40 && line.msg === 'backups named later than the one just written are left alone and not counted in BACKUP_KEEP: has the clock gone back, or were they copied in?')).toEqual(
      runs.map((line): unknown => expect.objectContaining({ dir: backups, file: line.file, ahead })),
    );
    expect(valueOf(scraped, 'plants_backup_future_files')).toBe(3);
    expect(valueOf(scraped, 'plants_backup_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
  }, 60_000);

  it('when the backup directory is gone, then the backup fails with an error line and a count, creates keep succeeding, and the next one succeeds once it is back', async () => {
    const dir = tempDataDir();
    const backups = path.join(dir, 'backups');
    const metricsPort = await freePort();
    const server = await startServer({
      DATABASE_URL: `file:${path.join(dir, 'plants.db')}`,
      BACKUP_DIR: backups,
      BACKUP_INTERVAL: '1s',
      METRICS_PORT: String(metricsPort),
    });
    try {
      await until(() => failed(server).length >= 1);
      const create = await post(server, { id: 7, name: 'served meanwhile' });
      const ready = await fetch(`${server.url}/readyz`);
      const scraped = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);

      expect(failed(server)[0]).toMatchObject({ level: 50, msg: `backup failed: the directory ${backups} does not exist` });
      expect(create.status).toBe(200);
      expect(ready.status).toBe(200);
      expect(valueOf(scraped, 'plants_backup_failures_total')).toBeGreaterThanOrEqual(1);

      mkdirSync(backups);
      await until(() => written(server).length >= 1);

      expect(rowsOf(written(server)[0]?.file as string)).toEqual([{ id: 7n, name: 'served meanwhile', tag: null }]);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('when the disk fills during a backup, then that backup fails and leaves nothing, serving goes on, and a later one succeeds with room', async () => {
    const dir = tempDataDir();
    const disk = path.join(dir, 'small-disk');
    mkdirSync(disk);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk], { stdio: 'ignore' });
    } catch {
      process.stdout.write('skipped: the disk-full case needs `mount -t tmpfs` (root); this machine refused it\n');
      return;
    }
    try {
      seedStore(path.join(dir, 'plants.db'), 100_000);
      const server = await startServer({ DATABASE_URL: `file:${path.join(dir, 'plants.db')}`, BACKUP_DIR: disk, BACKUP_INTERVAL: '1s' });
      try {
        await until(() => failed(server).length >= 1);
        const create = await post(server, { id: 100_000_001, name: 'served meanwhile' });

        expect(failed(server)[0]).toMatchObject({ level: 50, msg: expect.stringMatching(/^backup failed: copying .* failed \(SQLITE_FULL: database or disk is full\)$/) });
        expect(create.status).toBe(200);
        expect(readdirSync(disk)).toEqual([]);

        execFileSync('mount', ['-o', 'remount,size=64m', disk]);
        await until(() => written(server).length >= 1);

        expect(written(server)[0]).toMatchObject({ plants: 100_001 });
      } finally {
        await server.stop();
      }
    } finally {
      execFileSync('umount', [disk]);
    }
  }, 90_000);

  it('when SIGTERM comes during a backup, then the backup stops at its next step, leaves no file, and the service exits 0', async () => {
    const dir = tempDataDir();
    const backups = path.join(dir, 'backups');
    mkdirSync(backups);
    seedStore(path.join(dir, 'plants.db'), 1_000_000);
    const server = await startServer({ DATABASE_URL: `file:${path.join(dir, 'plants.db')}`, BACKUP_DIR: backups, BACKUP_INTERVAL: '1s' });
    await until(() => readdirSync(backups).some((name) => name.startsWith('.plant-store-tmp-')), 30_000);

    const { code } = await server.stop('SIGTERM');

    expect(code).toBe(0);
    expect(server.lines.find((line) => line.msg === 'backup stopped: the service is shutting down')).toMatchObject({ level: 30 });
    expect(failed(server)).toEqual([]);
    expect(readdirSync(backups)).toEqual([]);
  }, 120_000);
});
