import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, plantRows, queryJson, type TestDatabase } from '../helpers/postgres';
import { rowsOf, runCli, SEEDED_AT, seedStore } from '../helpers/plant-store-cli';
import { tempDataDir } from '../helpers/server-process';
import { TIMES } from '../helpers/transfer-lines';

// Edge ids (int64's ends, 2^53 + 1, which a double cannot hold), JSON escapes and characters beyond the BMP, each
// with the times an import keeps.
const EXPORTED =
  `{"id":-9223372036854775808,"name":"lowest",${TIMES}}\n` +
  `{"id":1,"name":"Aloe \\"vera\\"","tag":"back\\\\slash",${TIMES}}\n` +
  `{"id":9007199254740993,"name":"Fícus 🌿","tag":"indoor",${TIMES}}\n` +
  `{"id":9223372036854775807,"name":"highest","tag":"edge",${TIMES}}\n`;

const env = (file: string) => ({ DATABASE_URL: `file:${file}` });

// Stdin arrives in chunks of 64 KiB: 8,000 short plants span four of them.
const MANY = Array.from({ length: 8000 }, (_, i) => `{"id":${i + 1},"name":"plant ${i + 1}"}\n`).join('');

/** MANY with one byte of the given line (1-based) replaced by 0xFF, which is never valid in UTF-8. */
function invalidOnLine(line: number, at = 10): Buffer {
  const input = Buffer.from(MANY);
  let start = 0;
  for (let seen = 1; seen < line; seen += 1) start = input.indexOf(0x0a, start) + 1;
  input[start + at] = 0xff;
  return input;
}

/** Valid plants, one of whose names has a 4-byte character straddling byte 65,536, where stdin's first chunk ends. */
function characterAcrossTheFirstChunk(): string {
  const lines: string[] = [];
  let bytes = 0;
  for (let id = 1; ; id += 1) {
    const room = 65_534 - bytes - `{"id":${id + 1},"name":"`.length;
    const line = room > 200 ? `{"id":${id},"name":"plant ${id}"}\n` : `{"id":${id},"name":"${'a'.repeat(room - `{"id":${id},"name":""}\n`.length)}"}\n`;
    lines.push(line);
    bytes += Buffer.byteLength(line);
    if (room <= 200) return `${lines.join('')}{"id":${id + 1},"name":"🌿 across"}\n{"id":${id + 2},"name":"after"}\n`;
  }
}


describe('plant-store export and import (SQLite)', () => {
  it('when plants are imported into a new store and exported, then the text comes back byte for byte, ids exact, and the schema is the migrations\'', async () => {
    const file = path.join(tempDataDir(), 'plants.db');

    const imported = await runCli(['import'], env(file), EXPORTED);
    const exported = await runCli(['export'], env(file));

    expect(imported).toEqual({ code: 0, stderr: '', stdout: `imported 4 lines into ${file}: 4 new plants, 0 already stored; it now holds 4\n` });
    expect(exported).toEqual({ code: 0, stdout: EXPORTED, stderr: `exported 4 plants from ${file}\n` });
    const db = new Database(file);
    expect(db.prepare('SELECT name FROM schema_migrations ORDER BY name').pluck().all()).toEqual([
      '001-create-plants.sql',
      '002-plants-by-tag.sql',
      '003-webhook-outbox.sql',
      '004-webhook-trace.sql',
      '005-plant-events.sql',
      '006-webhook-event-type.sql',
      '007-restore-marks.sql',
      '008-plant-times-and-keys.sql',
      '009-plant-orders.sql',
      '010-idempotency-keys.sql',
      '011-plant-find-indexes.sql',
      '012-tenants.sql',
    ]);
    db.close();
  });

  it('when the same file is imported again, then nothing changes and the count says so', async () => {
    const file = path.join(tempDataDir(), 'plants.db');
    await runCli(['import'], env(file), EXPORTED);

    const again = await runCli(['import'], env(file), EXPORTED);

    expect(again).toEqual({ code: 0, stderr: '', stdout: `imported 4 lines into ${file}: 0 new plants, 4 already stored; it now holds 4\n` });
    expect(rowsOf(file)).toHaveLength(4);
  });

  it.each([
    ['an id beyond int64', '{"id":9223372036854775808,"name":"too big"}', 'line 3: id must be an integer from -9223372036854775808 to 9223372036854775807'],
    ['a fractional id', '{"id":1.5,"name":"half"}', 'line 3: id must be an integer from -9223372036854775808 to 9223372036854775807'],
    ['text that is not JSON', '{"id":7,"name":', 'line 3: not JSON ('],
    ['a plant without a name', '{"id":7}', 'line 3: name is required'],
    ['an empty line', '', 'line 3: empty; one plant per line'],
    ['a plant stored with another name', '{"id":100,"name":"not the stored one"}', `line 3: plant 100 is stored as {"id":100,"name":"plant 100","createdAt":"${SEEDED_AT}","updatedAt":"${SEEDED_AT}"}, and this line differs; nothing was imported`],
    ['a plant with only one of its times', '{"id":9,"name":"nine","createdAt":"2026-01-02T03:04:05.006Z"}', 'line 3: createdAt and updatedAt must both be RFC 3339 times in UTC with milliseconds'],
    ['a time that is not one', '{"id":9,"name":"nine","createdAt":"2026-02-30T03:04:05.006Z","updatedAt":"2026-02-30T03:04:05.006Z"}', 'line 3: createdAt and updatedAt must both be RFC 3339 times'],
  ])('when line 3 holds %s, then the import stops naming the line and the store is exactly as it was', async (_case, bad, message) => {
    const file = path.join(tempDataDir(), 'plants.db');
    seedStore(file, 1, 100);
    const input = `{"id":5,"name":"five"}\n{"id":6,"name":"six"}\n${bad}\n{"id":8,"name":"eight"}\n`;

    const run = await runCli(['import'], env(file), input);

    expect(run.code).toBe(1);
    expect(run.stderr.startsWith(`plant-store import: ${message}`)).toBe(true);
    expect(rowsOf(file)).toEqual([{ id: 100n, name: 'plant 100', tag: null }]);
  });

  it.each([
    ['line 5,000, deep in the third chunk', 5000, 10],
    ['the first line wholly inside the third chunk', 4167, 10],
    ['the line that the second chunk begins inside of, after the boundary', 2118, 20],
    ['the last line', 8000, 10],
  ])('when a byte that is not UTF-8 is on %s, then the import names exactly that line and stores nothing', async (_case, line, at) => {
    const file = path.join(tempDataDir(), 'plants.db');
    seedStore(file, 1, 100_000);

    const run = await runCli(['import'], env(file), invalidOnLine(line, at));

    expect(run).toEqual({ code: 1, stdout: '', stderr: `plant-store import: line ${line}: not valid UTF-8\n` });
    expect(rowsOf(file)).toEqual([{ id: 100_000n, name: 'plant 100000', tag: null }]);
  });

  it('when a character\'s bytes are split across two chunks of the input, then it is read whole', async () => {
    const file = path.join(tempDataDir(), 'plants.db');
    const input = characterAcrossTheFirstChunk();
    const at = Buffer.from(input).indexOf('🌿');

    const run = await runCli(['import'], env(file), input);

    expect(at).toBe(65_534);
    expect(run.code).toBe(0);
    expect(rowsOf(file).find((plant) => plant.name === '🌿 across')).toBeDefined();
  });

  it('when an import into a new store fails, then no store file is left behind', async () => {
    const file = path.join(tempDataDir(), 'plants.db');

    const run = await runCli(['import'], env(file), '{"id":1,"name":"one"}\nnot json\n');

    expect(run.code).toBe(1);
    expect(run.stderr.startsWith('plant-store import: line 2: not JSON (')).toBe(true);
    expect(existsSync(file)).toBe(false);
  });

  it('when the store does not exist, then export says so and creates nothing', async () => {
    const file = path.join(tempDataDir(), 'none.db');

    expect(await runCli(['export'], env(file))).toEqual({ code: 1, stdout: '', stderr: `plant-store export: no SQLite store at ${file}\n` });
    expect(existsSync(file)).toBe(false);
  });

  it('when a store of 50,000 plants is exported and imported elsewhere, then both hold the same plants', async () => {
    const source = path.join(tempDataDir(), 'plants.db');
    seedStore(source, 50_000);
    const target = path.join(tempDataDir(), 'copy.db');

    const exported = await runCli(['export'], env(source));
    const imported = await runCli(['import'], env(target), exported.stdout);

    expect(imported.stdout).toBe(`imported 50000 lines into ${target}: 50000 new plants, 0 already stored; it now holds 50000\n`);
    expect(rowsOf(target)).toEqual(rowsOf(source));
  }, 60_000);
});

describeWith('postgres', 'plant-store export, import and copy (PostgreSQL)', (server) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(server);
  });
  afterEach(async () => {
    await database.drop();
  });

  it('when plants are imported into a fresh database and exported, then the text comes back byte for byte; a second import changes nothing', async () => {
    const imported = await runCli(['import'], { DATABASE_URL: database.url }, EXPORTED);
    const again = await runCli(['import'], { DATABASE_URL: database.url }, EXPORTED);
    const exported = await runCli(['export'], { DATABASE_URL: database.url });

    expect(imported).toMatchObject({ code: 0, stdout: `imported 4 lines into ${database.url}: 4 new plants, 0 already stored; it now holds 4\n` });
    expect(again).toMatchObject({ code: 0, stdout: `imported 4 lines into ${database.url}: 0 new plants, 4 already stored; it now holds 4\n` });
    expect(exported).toEqual({ code: 0, stdout: EXPORTED, stderr: `exported 4 plants from ${database.url}\n` });
  });

  it('when a line conflicts with a stored plant or is malformed, then the import stops naming the line and PostgreSQL keeps its plants as they were', async () => {
    await runCli(['import'], { DATABASE_URL: database.url }, '{"id":100,"name":"stored"}\n');

    const conflict = await runCli(['import'], { DATABASE_URL: database.url }, '{"id":5,"name":"five"}\n{"id":100,"name":"other"}\n');
    const repeated = await runCli(['import'], { DATABASE_URL: database.url }, '{"id":5,"name":"five"}\n{"id":5,"name":"cinq"}\n');
    const outside = await runCli(['import'], { DATABASE_URL: database.url }, '{"id":5,"name":"five"}\n{"id":-9223372036854775809,"name":"low"}\n');

    const stored = (text: string): unknown => expect.stringMatching(new RegExp(`^plant-store import: line 2: plant ${text.replace(/[{}]/g, '\\$&').slice(0, -2)},"createdAt":"[^"]+","updatedAt":"[^"]+"\\}, and this line differs; nothing was imported\\n$`));
    expect(conflict).toMatchObject({ code: 1, stderr: stored('100 is stored as {"id":100,"name":"stored"}') });
    expect(repeated).toMatchObject({ code: 1, stderr: stored('5 is stored as {"id":5,"name":"five"}') });
    expect(outside).toMatchObject({ code: 1, stderr: 'plant-store import: line 2: id must be an integer from -9223372036854775808 to 9223372036854775807\n' });
    expect(plantRows(database.url)).toEqual([{ id: 100n, name: 'stored', tag: null }]);
  });

  it('when a byte that is not UTF-8 is on line 5,000, then the import names that line and PostgreSQL keeps its plants as they were', async () => {
    await runCli(['import'], { DATABASE_URL: database.url }, '{"id":100000,"name":"stored"}\n');

    const run = await runCli(['import'], { DATABASE_URL: database.url }, invalidOnLine(5000));

    expect(run).toMatchObject({ code: 1, stderr: 'plant-store import: line 5000: not valid UTF-8\n' });
    expect(plantRows(database.url)).toEqual([{ id: 100_000n, name: 'stored', tag: null }]);
  });

  it('when a SQLite store is copied to PostgreSQL, then every plant is there and the counts are reported', async () => {
    const source = path.join(tempDataDir(), 'plants.db');
    seedStore(source, 20_000, -10_000);

    const run = await runCli(['copy', '--to', database.url], env(source));

    expect(run).toEqual({
      code: 0,
      stderr: '',
      stdout: `copied 20000 plants from ${source} to ${database.url}: 20000 new, 0 already there; the target held 0 and now holds 20000\n`,
    });
    const fingerprint = (rows: { id: bigint; name: string; tag: string | null }[]) =>
      createHash('md5').update(rows.map((plant) => `${plant.id}|${plant.name}|${plant.tag ?? '-'}`).join(',')).digest('hex');
    const stored = queryJson<{ count: number; md5: string }>(
      database.url,
      "SELECT json_build_object('count', count(*), 'md5', md5(string_agg(id::text || '|' || name || '|' || coalesce(tag, '-'), ',' ORDER BY id))) FROM plants",
    );
    expect(stored).toEqual({ count: 20_000, md5: fingerprint(rowsOf(source)) });
  }, 60_000);
});
