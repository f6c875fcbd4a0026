import path from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';
import { runCli } from '../helpers/plant-store-cli';
import { tempDataDir } from '../helpers/server-process';
import { TENANTS_EXPORTED as EXPORTED, TIMES } from '../helpers/transfer-lines';

// Tenants through plant-store export, import, copy, backup and restore on SQLite: the same id in three tenants
// stays three plants, each line names its tenant (the default tenant's lines none), and TENANT_DEFAULT's name
// is the default tenant's, as a request's would be.

const env = (file: string, extra: Record<string, string> = {}) => ({ DATABASE_URL: `file:${file}`, ...extra });

/** Every stored plant as (tenant, id, name), read from the file. */
function stored(file: string): [string, bigint, string][] {
  const db = new Database(file, { readonly: true });
  db.defaultSafeIntegers(true);
  try {
    return db.prepare('SELECT tenant, id, name FROM plants ORDER BY tenant, id /* unchecked: test */').raw().all() as [string, bigint, string][];
  } finally {
    db.close();
  }
}

describe('plant-store with tenants (SQLite)', () => {
  it('when lines of three tenants share an id, then the import keeps them apart and the export gives the text back byte for byte', async () => {
    const file = path.join(tempDataDir(), 'plants.db');

    const imported = await runCli(['import'], env(file), EXPORTED);
    const again = await runCli(['import'], env(file), EXPORTED);
    const exported = await runCli(['export'], env(file));

    expect(imported).toEqual({ code: 0, stderr: '', stdout: `imported 4 lines into ${file}: 4 new plants, 0 already stored; it now holds 4\n` });
    expect(again.stdout).toBe(`imported 4 lines into ${file}: 0 new plants, 4 already stored; it now holds 4\n`);
    expect(exported).toEqual({ code: 0, stdout: EXPORTED, stderr: `exported 4 plants from ${file}\n` });
    expect(stored(file)).toEqual([['', 1n, 'shared one'], ['', 2n, 'shared two'], ['acme', 1n, 'acme one'], ['bob 🌿', 1n, 'bob one']]);
  });

  it('when a line names TENANT_DEFAULT, then its plant goes to the default tenant and exports without a tenant', async () => {
    const file = path.join(tempDataDir(), 'plants.db');

    const imported = await runCli(['import'], env(file, { TENANT_DEFAULT: 'alice' }), `{"tenant":"alice","id":7,"name":"alice's",${TIMES}}\n{"tenant":"acme","id":7,"name":"acme's",${TIMES}}\n`);
    const exported = await runCli(['export'], env(file));

    expect(imported.code).toBe(0);
    expect(exported.stdout).toBe(`{"id":7,"name":"alice's",${TIMES}}\n{"tenant":"acme","id":7,"name":"acme's",${TIMES}}\n`);
  });

  it('when a line meets a plant of its id in another tenant only, then it is a new plant; in its own tenant with another name, the import stops', async () => {
    const file = path.join(tempDataDir(), 'plants.db');
    await runCli(['import'], env(file), EXPORTED);

    const other = await runCli(['import'], env(file), `{"tenant":"carol","id":2,"name":"carol two"}\n`);
    const conflict = await runCli(['import'], env(file), `{"tenant":"acme","id":1,"name":"not acme's"}\n`);

    expect(other.stdout).toBe(`imported 1 lines into ${file}: 1 new plants, 0 already stored; it now holds 5\n`);
    expect(conflict).toMatchObject({ code: 1, stderr: expect.stringMatching(/^plant-store import: line 1: plant 1 is stored as \{"tenant":"acme","id":1,"name":"acme one",/) });
  });

  it.each([
    ['an empty tenant', '""'],
    ['a tenant that is not a string', '42'],
    ['a tenant of 256 characters', JSON.stringify('a'.repeat(256))],
  ])('when a line names %s, then the import stops naming the line and stores nothing', async (_case, tenant) => {
    const file = path.join(tempDataDir(), 'plants.db');
    await runCli(['import'], env(file), EXPORTED);

    const run = await runCli(['import'], env(file), `{"tenant":"acme","id":9,"name":"nine"}\n{"tenant":${tenant},"id":9,"name":"nine"}\n`);

    expect(run).toMatchObject({ code: 1, stderr: "plant-store import: line 2: tenant must be a tenant's name, a string of 1 to 255 characters, or left out for the default tenant\n" });
    expect(stored(file)).toHaveLength(4);
  });

  it('when a store with tenants is copied, backed up and restored, then each copy holds the same plants in the same tenants', async () => {
    const dir = tempDataDir();
    const source = path.join(dir, 'plants.db');
    await runCli(['import'], env(source), EXPORTED);

    const copied = await runCli(['copy', '--to', `file:${path.join(dir, 'copy.db')}`], env(source));
    const backedUp = await runCli(['backup', '--to', path.join(dir, 'b.db')], env(source));
    const restored = await runCli(['restore', '--from', path.join(dir, 'b.db')], env(path.join(dir, 'restored.db')));

    expect([copied.code, backedUp.code, restored.code]).toEqual([0, 0, 0]);
    expect(stored(path.join(dir, 'copy.db'))).toEqual(stored(source));
    expect(stored(path.join(dir, 'restored.db'))).toEqual(stored(source));
    expect((await runCli(['export'], env(path.join(dir, 'restored.db')))).stdout).toBe(EXPORTED);
  });

  it('when a backup made before tenants is restored, then migration 012 runs and its plants are the default tenant\'s', async () => {
    const dir = tempDataDir();
    const old = path.join(dir, 'old.db');
    const db = new Database(old);
    const migrations = loadMigrations();
    migrate(db, migrations.slice(0, migrations.findIndex((migration) => migration.name === '012-tenants.sql')));
    db.exec(`INSERT INTO plants (id, name, created_at, updated_at, name_key) VALUES (1, 'old one', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'old one')`);
    db.close();

    const backedUp = await runCli(['backup', '--to', path.join(dir, 'b.db')], env(old));
    const restored = await runCli(['restore', '--from', path.join(dir, 'b.db')], env(path.join(dir, 'restored.db')));

    expect(backedUp.stdout).toContain('migration 011-plant-find-indexes.sql');
    expect(restored.code).toBe(0);
    expect(stored(path.join(dir, 'restored.db'))).toEqual([['', 1n, 'old one']]);
  });
});
