import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/database.sqlite';
import { loadMigrations, migrate } from '../../src/db/migrate.sqlite';

const SQL = 'CREATE TABLE notes (\n  id INTEGER PRIMARY KEY,\n  body TEXT NOT NULL\n) STRICT;\n';

function setup(text: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plants-migrate-'));
  const migrations = path.join(dir, 'migrations');
  mkdirSync(migrations);
  const file = path.join(migrations, '001-notes.sql');
  writeFileSync(file, text);
  const db = openDatabase(path.join(dir, 'plants.db'), { busyTimeoutMs: 1000 });
  migrate(db, loadMigrations(migrations));
  return { db, migrations, file };
}

describe('migration checksums', () => {
  it.each([
    ['LF to CRLF', SQL, SQL.replace(/\n/g, '\r\n')],
    ['CRLF to LF', SQL.replace(/\n/g, '\r\n'), SQL],
  ])('when an applied file only changes its line endings (%s), then the start goes on', (_case, applied, now) => {
    const { db, migrations, file } = setup(applied);
    writeFileSync(file, now);

    const pending = migrate(db, loadMigrations(migrations));

    expect(pending).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(now);
    db.close();
  });

  it('when an applied file has any other edit, then the start is refused naming the file', () => {
    const { db, migrations, file } = setup(SQL);
    writeFileSync(file, SQL.replace('body TEXT', 'body  TEXT').replace(/\n/g, '\r\n'));

    expect(() => migrate(db, loadMigrations(migrations))).toThrow(/^migration 001-notes\.sql was edited after it was applied/);
    db.close();
  });
});
