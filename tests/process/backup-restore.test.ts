import { existsSync, readdirSync, readFileSync, writeFileSync, truncateSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LATEST_MIGRATION, rowsOf, runCli, seedStore } from '../helpers/plant-store-cli';
import { withTimes } from '../helpers/plants';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

const post = (server: ServerProcess, body: unknown) =>
  fetch(`${server.url}/plants`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('plant-store backup and restore', () => {
  it('when a backup runs beside a service taking creates, then every plant acknowledged before it started is in it, and creates keep succeeding', async () => {
    const dir = tempDataDir();
    const store = path.join(dir, 'plants.db');
    seedStore(store, 200_000, 1);
    const server = await startServer({ DATABASE_URL: `file:${store}` });
    const acknowledged: number[] = [];
    const statuses: number[] = [];
    let writing = true;
    let next = 10_000_000;
    const writer = async () => {
      while (writing) {
        const id = (next += 1);
        const res = await post(server, { id, name: `live ${id}` });
        statuses.push(res.status);
        if (res.status === 200) acknowledged.push(id);
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    let run;
    let before: Set<number>;
    let duringBackup: number;
    try {
      // Creates are flowing (some acknowledged) before the backup starts, however slow the machine.
      for (let waited = 0; acknowledged.length < 20 && waited < 20_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      before = new Set(acknowledged);
      const ackedBeforeCount = acknowledged.length;
      run = await runCli(['backup', '--to', path.join(dir, 'b.db')], { DATABASE_URL: `file:${store}` });
      duringBackup = acknowledged.length - ackedBeforeCount;
    } finally {
      writing = false;
      await Promise.all(writers);
      await server.stop();
    }

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(new RegExp(`^backed up ${store} to ${path.join(dir, 'b.db')}: \\d+ plants, migration ${LATEST_MIGRATION}, \\d+ bytes, sha256 [0-9a-f]{64}, in [0-9.]+ s; sidecar ${path.join(dir, 'b.db.meta.json')}\\n$`));
    const backedUp = new Set(rowsOf(path.join(dir, 'b.db')).map((row) => Number(row.id)));
    expect([...before].filter((id) => !backedUp.has(id))).toEqual([]);
    expect(before.size).toBeGreaterThan(0);
    expect(duringBackup).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    const sidecar = JSON.parse(readFileSync(path.join(dir, 'b.db.meta.json'), 'utf8'));
    expect(sidecar).toEqual({
      format: 'plant-store-backup/1',
      file: 'b.db',
      sha256: sha256(path.join(dir, 'b.db')),
      bytes: statSync(path.join(dir, 'b.db')).size,
      plants: backedUp.size,
      migration: LATEST_MIGRATION,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      source: store,
    });
    expect(readdirSync(dir).filter((name) => name.startsWith('.plant-store-tmp-'))).toEqual([]);
  }, 60_000);

  it('when the service runs, then restore refuses and leaves the store as it was; once stopped, the backup replaces it and the old store is kept', async () => {
    const dir = tempDataDir();
    const store = path.join(dir, 'plants.db');
    const env = { DATABASE_URL: `file:${store}` };
    let server = await startServer(env);
    try {
      expect((await post(server, { id: 1, name: 'in the backup' })).status).toBe(200);
      expect((await runCli(['backup', '--to', path.join(dir, 'b.db')], env)).code).toBe(0);
      expect((await post(server, { id: 2, name: 'after the backup' })).status).toBe(200);

      const refused = await runCli(['restore', '--from', path.join(dir, 'b.db')], env);
      const stillServing = await post(server, { id: 3, name: 'after the refusal' });
      await server.stop();

      expect(refused).toEqual({
        code: 1,
        stdout: '',
        stderr: `plant-store restore: ${store} is in use: another process has it open (a running service, or a backup of it); stop the service, then restore\n`,
      });
      expect(stillServing.status).toBe(200);
      expect(rowsOf(store).map((row) => row.id)).toEqual([1n, 2n, 3n]);

      const restored = await runCli(['restore', '--from', path.join(dir, 'b.db')], env);

      const kept = readdirSync(dir).filter((name) => name.startsWith('plants.db.replaced-'));
      expect(kept).toEqual([expect.stringMatching(/^plants\.db\.replaced-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/)]);
      expect(restored).toEqual({
        code: 0,
        stderr: '',
        stdout:
          `checked ${path.join(dir, 'b.db')}: sha256 ${sha256(path.join(dir, 'b.db'))} as its sidecar says, integrity ok, 1 plants, migration ${LATEST_MIGRATION}\n` +
          `kept the store that was at ${store} as ${path.join(dir, kept[0] as string)}\n` +
          `restored ${path.join(dir, 'b.db')} to ${store}; start the service to serve it\n`,
      });
      expect(rowsOf(path.join(dir, kept[0] as string)).map((row) => row.id)).toEqual([1n, 2n, 3n]);
      server = await startServer(env);
      const [one, two] = await Promise.all([1, 2].map((id) => fetch(`${server.url}/plants/${id}`, { headers: { Authorization: `Bearer ${TOKEN}` } })));
      await server.stop();
      expect({ one: one?.status, body: await one?.json(), two: two?.status }).toEqual({ one: 200, body: withTimes({ id: 1, name: 'in the backup' }), two: 404 });
    } finally {
      await server.stop();
    }
  }, 60_000);

  describe('a damaged backup', () => {
    const dir = tempDataDir();
    const store = path.join(dir, 'plants.db');
    const env = { DATABASE_URL: `file:${store}` };

    beforeAll(async () => {
      seedStore(path.join(dir, 'source.db'), 20_000);
      seedStore(store, 3, 900);
      expect((await runCli(['backup', '--to', path.join(dir, 'good.db'), '--database', `file:${path.join(dir, 'source.db')}`])).code).toBe(0);
    });

    const copyOf = (name: string, change: (bytes: Buffer) => Buffer, resign = false) => {
      const bytes = change(readFileSync(path.join(dir, 'good.db')));
      writeFileSync(path.join(dir, name), bytes);
      const sidecar = JSON.parse(readFileSync(path.join(dir, 'good.db.meta.json'), 'utf8'));
      const meta = resign ? { ...sidecar, file: name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } : sidecar;
      writeFileSync(path.join(dir, `${name}.meta.json`), JSON.stringify(meta));
      return path.join(dir, name);
    };

    const storeUnchanged = () => {
      expect(rowsOf(store).map((row) => row.id)).toEqual([900n, 901n, 902n]);
      expect(readdirSync(dir).filter((name) => name.startsWith('.plant-store-tmp-') || name.includes('.replaced-'))).toEqual([]);
    };

    it('when bytes in the middle changed, then restore refuses on the checksum', async () => {
      const file = copyOf('flipped.db', (bytes) => {
        bytes.fill(0x5a, 40_000, 40_100);
        return bytes;
      });

      const run = await runCli(['restore', '--from', file], env);

      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^plant-store restore: ${file} does not match the SHA-256 in its sidecar \\([0-9a-f]{12}…, expected [0-9a-f]{12}…\\): the file is damaged or was changed; nothing was restored\\n$`));
      storeUnchanged();
    });

    it('when the file is truncated, then restore refuses on the size', async () => {
      const file = copyOf('truncated.db', (bytes) => bytes);
      const { size } = statSync(file);
      truncateSync(file, 8192);

      const run = await runCli(['restore', '--from', file], env);

      expect(run).toMatchObject({ code: 1, stderr: `plant-store restore: ${file} has 8192 bytes where its sidecar says ${size}: the file is truncated or was changed; nothing was restored\n` });
      storeUnchanged();
    });

    it('when the file is corrupt but its sidecar was rewritten to match, then the integrity check refuses it', async () => {
      // Page 3 onwards hold the plants' b-tree: garbage there is what a torn copy looks like.
      const file = copyOf('corrupt.db', (bytes) => {
        bytes.fill(0xff, 3 * 4096 + 8, 6 * 4096);
        return bytes;
      }, true);

      const run = await runCli(['restore', '--from', file], env);

      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^plant-store restore: ${file} (fails SQLite's integrity check: |is not a sound SQLite database \\(SQLITE_CORRUPT)`));
      storeUnchanged();
    });

    it('when the file has no sidecar, then restore refuses and says why', async () => {
      writeFileSync(path.join(dir, 'alone.db'), readFileSync(path.join(dir, 'good.db')));

      const run = await runCli(['restore', '--from', path.join(dir, 'alone.db')], env);

      expect(run).toMatchObject({
        code: 1,
        stderr: `plant-store restore: ${path.join(dir, 'alone.db.meta.json')} is missing: without its sidecar the backup cannot be checked (was it written by plant-store backup, and copied with it?)\n`,
      });
      storeUnchanged();
    });

    it('when the backup is at a migration newer than this build, then restore refuses naming both levels', async () => {
      const file = path.join(dir, 'future.db');
      writeFileSync(file, readFileSync(path.join(dir, 'good.db')));
      const db = new Database(file);
      db.prepare("INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ('999-from-the-future.sql', 'x', 'now')").run();
      db.close();
      const bytes = readFileSync(file);
      writeFileSync(`${file}.meta.json`, JSON.stringify({ ...JSON.parse(readFileSync(path.join(dir, 'good.db.meta.json'), 'utf8')), bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }));

      const run = await runCli(['restore', '--from', file], env);

      expect(run).toMatchObject({
        code: 1,
        stderr: `plant-store restore: ${file} is at migration 999-from-the-future.sql, newer than this build (which knows up to ${LATEST_MIGRATION}): restore it with the plant-store version that wrote it\n`,
      });
      storeUnchanged();
    });
  });

  it('when the target file exists, then backup refuses rather than replace a backup', async () => {
    const dir = tempDataDir();
    seedStore(path.join(dir, 'plants.db'), 3);
    writeFileSync(path.join(dir, 'b.db'), 'an older backup');

    const run = await runCli(['backup', '--to', path.join(dir, 'b.db')], { DATABASE_URL: `file:${path.join(dir, 'plants.db')}` });

    expect(run).toEqual({ code: 1, stdout: '', stderr: `plant-store backup: ${path.join(dir, 'b.db')} exists already; give the backup a new name\n` });
    expect(readFileSync(path.join(dir, 'b.db'), 'utf8')).toBe('an older backup');
  });

  it('when the store is PostgreSQL, then backup and restore point to its own tools', async () => {
    const run = await runCli(['backup', '--to', '/tmp/never.db'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/plants' });

    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: 'plant-store backup: backup works on the SQLite store; for PostgreSQL use its own tools (pg_dump -Fc, pg_restore; see docs/backups.md), or plant-store export\n',
    });
    expect(existsSync('/tmp/never.db')).toBe(false);
  });

  it.each(['backup', 'restore', 'export', 'import', 'copy'])('when %s --help is asked, then it prints its usage and exits 0', async (command) => {
    const run = await runCli([command, '--help']);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: plant-store ${command} `));
    expect(run.stdout).toContain('--database URL');
  });

  it('when the command is unknown or missing an option, then it says so and exits 2', async () => {
    expect(await runCli(['bakup'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^plant-store: unknown command "bakup"\n\nUsage: plant-store <command>/) });
    expect(await runCli(['backup'])).toMatchObject({ code: 2, stderr: 'plant-store backup: --to is required (see --help)\n' });
  });
});
