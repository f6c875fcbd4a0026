// The tenants' migrations on PostgreSQL at size (issue 35, R4 of docs/performance/tenants.md): a store of the version
// before tenants with BENCH_STORED plants (1,000,000), as many events and 100,000 idempotency keys, then
// migrations/postgres/015, 016 and 017 applied one file at a time as a starting replica applies them, while a
// replica of the previous version reads a plant by id and writes a plant (009's plants_write) in a loop, each on
// its own connection. Prints each file's duration and the longest wait of a read and of a write during it.
//
//   npm run build && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --require tsx/cjs bench/tenants.migrate.postgres.ts
import { admin, freshDatabase } from './postgres.section';
// The service's own runner, built (dist/), as bench/tenants.migrate.sqlite.ts takes SQLite's: the bench compiles bench/ alone.
/* eslint-disable @typescript-eslint/no-require-imports */
type Migration = { name: string };
type Options = { url: string; poolSize: number; statementTimeoutMs: number; connectTimeoutMs: number };
const { loadPostgresMigrations, migratePostgres } = require('../dist/db/migrate.postgres') as {
  loadPostgresMigrations: () => Migration[];
  migratePostgres: (options: Options, migrations: readonly Migration[]) => Promise<string[]>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

const STORED = Number(process.env.BENCH_STORED ?? 1_000_000);
const KEYS = 100_000;
const TENANT_FILES = ['015-tenant-columns.sql', '016-tenant-indexes.sql', '017-tenant-keys.sql'];
const T = '2026-11-27T09:41:07.250Z';

/** The previous version's store at size: plants with times and search keys, and their events. */
async function seed(url: string): Promise<void> {
  await admin(async (client) => {
    await client.query(`INSERT INTO plants (id, name, tag, created_at, updated_at, name_key, version)
      SELECT i, 'Monstera ' || i, 'tag' || (i % 100), plant_time_text(1700000000000 + i), plant_time_text(1700000000000 + i), 'monstera ' || i, i
      FROM generate_series(1, $1::int) AS i`, [STORED]);
    await client.query(`INSERT INTO plant_events (pos, kind, plant_id, name, tag, created_at, updated_at, at)
      SELECT i, 'created', i, 'Monstera ' || i, 'tag' || (i % 100), plant_time_text(1700000000000 + i), plant_time_text(1700000000000 + i), 1700000000000 + i
      FROM generate_series(1, $1::int) AS i`, [STORED]);
    await client.query('UPDATE plant_event_counter SET last_pos = $1', [STORED]);
  }, url);
}

/** The keys (migrations/postgres/012 makes their table). */
async function seedKeys(url: string): Promise<void> {
  await admin(async (client) => {
    await client.query(`INSERT INTO idempotency_keys (caller, key, fingerprint, status, expires_at)
      SELECT 'token:bench', 'key-' || i, lpad(to_hex(i), 64, '0'), 201, now() + interval '1 day' FROM generate_series(1, $1::int) AS i`, [KEYS]);
  }, url);
}

/**
 * A loop of one statement on its own connection until stopped; `longest()` answers the longest wait since
 * `reset()`, `failed()` the statements that failed (a previous-version write that meets a migration it cannot run under).
 */
function loop(url: string, statement: (n: number) => [string, unknown[]]) {
  let longest = 0;
  let running = true;
  let count = 0;
  let failed = 0;
  const done = admin(async (client) => {
    for (let n = 0; running; n += 1) {
      const [text, values] = statement(n);
      const started = performance.now();
      await client.query(text, values).catch((error: unknown) => {
        failed += 1;
        process.stderr.write(`failed: ${(error as Error).message}\n`);
      });
      longest = Math.max(longest, performance.now() - started);
      count += 1;
    }
  }, url);
  return {
    reset: () => {
      longest = 0;
      count = 0;
      failed = 0;
    },
    longest: () => longest,
    count: () => count,
    failed: () => failed,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

const READ = (n: number): [string, unknown[]] => ['SELECT id, name, tag, version FROM plants WHERE id = $1', [1 + ((n * 7919) % STORED)]];
// 009's plants_write as the previous version calls it: one create of a new id.
const WRITE = (n: number): [string, unknown[]] => {
  const id = 10_000_000 + n;
  return [
    'SELECT plants_write($1::bigint, $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[], $13::bigint[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[])',
    [Date.now(), [], [], [id], [`Bench ${id}`], [null], [T], [T], [`bench ${id}`], [1], [], ['created'], [id], [`Bench ${id}`], [null], [T], [T], [null], [null]],
  ];
};

async function main(): Promise<void> {
  const database = await freshDatabase();
  const options = { url: database.url, poolSize: 1, statementTimeoutMs: 600_000, connectTimeoutMs: 5000 };
  const migrations = loadPostgresMigrations();
  const upTo = (file: string) => migrations.slice(0, migrations.findIndex((migration) => migration.name === file) + 1);
  try {
    // Seeded after 009 (the columns exist) and before the indexes of 010–013 are built: bulk builds are faster.
    await migratePostgres(options, upTo('009-plant-times-and-keys.sql'));
    let started = performance.now();
    await seed(options.url);
    await migratePostgres(options, upTo('014-keyed-write-answers.sql'));
    await seedKeys(options.url);
    await admin((client) => client.query('VACUUM ANALYZE'), options.url);
    process.stderr.write(`seeded ${STORED} plants and events, ${KEYS} keys, in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    const reader = loop(options.url, READ);
    const writer = loop(options.url, WRITE);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rows: string[] = [];
    for (const file of TENANT_FILES) {
      reader.reset();
      writer.reset();
      started = performance.now();
      await migratePostgres(options, upTo(file));
      const seconds = (performance.now() - started) / 1000;
      // The loops' statements in flight when the file committed finish now: their wait counts.
      await new Promise((resolve) => setTimeout(resolve, 200));
      rows.push(
        `| ${file} | ${seconds.toFixed(2)} s | ${reader.longest().toFixed(0)} ms (${reader.count()} reads, ${reader.failed()} failed) | ` +
          `${writer.longest().toFixed(0)} ms (${writer.count()} writes, ${writer.failed()} failed) |`,
      );
    }
    await reader.stop();
    await writer.stop();
    const rowsKept = await admin(async (client) => (await client.query<{ n: string }>("SELECT count(*) AS n FROM plants WHERE tenant = ''")).rows[0]?.n, options.url);
    process.stdout.write(`| file (${STORED} plants) | duration | longest read wait | longest write wait |\n|---|---|---|---|\n${rows.join('\n')}\n`);
    process.stdout.write(`plants in the shared tenant after 017: ${rowsKept}\n`);
  } finally {
    await database.drop();
  }
}

void main();
