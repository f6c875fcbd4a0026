// The stores of the find section (bench/find.section.ts): STORED plants (1,000,000 by default) with names a person
// would give (genus, species, sometimes a cultivar), a tag on two thirds, created a year apart from first to last,
// written by SQL straight into a schema the service made (times and search keys as the service writes them; on
// SQLite the search index as its indexer leaves it). No events: a year of them is past EVENTS_RETENTION, so the
// feed's position is at the last plant's and nothing is left to prune. With BENCH_FIND_UPGRADE=1 they go with one
// 'created' event each into the schema of the migration before the times and search keys (SQLite 007, PostgreSQL
// 008) instead, and the service upgrades the store as it would in production (times from the events, keys
// filled, every later migration), timed from start to /readyz.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CURRENT, freshStore, ROOT, start, STORED, type Runtime } from './lib';
import { admin, freshDatabase, type PgDatabase } from './postgres.section';

// The service's own key (NFKC, then lower-cased), from its build: bench compiles on its own (rootDir bench).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { searchKey } = require('../dist/plants/plant.schemas') as { searchKey: (text: string) => string };

export const GENERA = [
  'Monstera', 'Philodendron', 'Calathea', 'Ficus', 'Pilea', 'Epipremnum', 'Sansevieria', 'Dracaena', 'Alocasia', 'Anthurium',
  'Begonia', 'Peperomia', 'Hoya', 'Maranta', 'Aglaonema', 'Spathiphyllum', 'Zamioculcas', 'Chlorophytum', 'Aspidistra', 'Schefflera',
  'Tradescantia', 'Syngonium', 'Fittonia', 'Oxalis', 'Senecio', 'Crassula', 'Echeveria', 'Haworthia', 'Aloe', 'Kalanchoe',
  'Nephrolepis', 'Asplenium', 'Adiantum', 'Platycerium', 'Polypodium', 'Strelitzia', 'Musa', 'Howea', 'Chamaedorea', 'Dypsis',
  'Yucca', 'Beaucarnea', 'Cycas', 'Saintpaulia', 'Streptocarpus', 'Phalaenopsis', 'Dendrobium', 'Tillandsia', 'Guzmania', 'Vriesea',
  'Ctenanthe', 'Stromanthe', 'Dieffenbachia', 'Rhaphidophora', 'Scindapsus', 'Ceropegia', 'Dischidia', 'Rhipsalis', 'Schlumbergera', 'Euphorbia',
];
export const SPECIES = [
  'deliciosa', 'adansonii', 'hederaceum', 'orbifolia', 'elastica', 'lyrata', 'peperomioides', 'aureum', 'trifasciata', 'marginata',
  'zebrina', 'clarinervium', 'maculata', 'obtusifolia', 'carnosa', 'kerrii', 'leuconeura', 'commutatum', 'wallisii', 'zamiifolia',
  'comosum', 'elatior', 'arboricola', 'podophyllum', 'albertii', 'triangularis', 'rowleyanus', 'ovata', 'elegans', 'fasciata',
  'vera', 'blossfeldiana', 'exaltata', 'nidus', 'raddianum', 'bifurcatum', 'nicolai', 'acuminata', 'forsteriana', 'lutescens',
  'elephantipes', 'recurvata', 'revoluta', 'ionantha', 'lingulata', 'splendens', 'burle-marxii', 'pictus', 'woodii', 'milii',
];
export const CULTIVARS = ['Variegata', 'Thai Constellation', 'Marble Queen', 'Pink Princess', 'Silver Satin', 'White Wizard', 'Albo', 'Aurea', 'Compacta', 'Tricolor'];
const ROOMS = ['kitchen', 'office', 'bedroom', 'balcony', 'hall'];
// The first plant's create, 2025-01-01T00:00:00.000Z; each next one 31.7 s later, so 1,000,000 span a year.
const FIRST_MS = 1_735_689_600_000;
const STEP_MS = 31_700;

/** A multiplicative hash of the id (Knuth's), the same in JavaScript and SQL: spreads names over ids. */
const hashOf = (id: number): number => (id * 2654435761) % 4294967296;

/** The name of plant `id`, as both stores are seeded. */
export function nameOf(id: number): string {
  const h = hashOf(id);
  const genus = GENERA[h % GENERA.length] as string;
  const species = SPECIES[Math.floor(h / GENERA.length) % SPECIES.length] as string;
  const rest = Math.floor(h / (GENERA.length * SPECIES.length));
  return rest % 4 === 0 ? `${genus} ${species} '${CULTIVARS[Math.floor(rest / 4) % CULTIVARS.length] as string}'` : `${genus} ${species}`;
}

const tagOf = (id: number): string | null => (id % 3 === 0 ? null : (ROOMS[id % ROOMS.length] as string));

type Migration = { name: string; sql: string; checksum: string };

/** The dialect's migrations before the one that adds the times and search keys, with the runner's checksums. */
function predecessorMigrations(dialect: 'sqlite' | 'postgres'): Migration[] {
  const dir = path.join(ROOT, 'migrations', dialect);
  const names = readdirSync(dir).filter((name) => /^\d+-[\w-]+\.sql$/.test(name)).sort();
  const upgrade = names.findIndex((name) => name.includes('times-and-keys'));
  if (upgrade < 0) throw new Error(`no times-and-keys migration in migrations/${dialect}`);
  return names.slice(0, upgrade).map((name) => {
    const sql = readFileSync(path.join(dir, name), 'utf8');
    return { name, sql, checksum: createHash('sha256').update(sql.replace(/\r\n?/g, '\n')).digest('hex') };
  });
}

/** `upgradeMs` and `from` only when the store was seeded at the previous schema and upgraded by the service. */
export type Seeded = { url: string; seedMs: number; upgradeMs?: number; from?: string; note?: string; drop: () => Promise<void> };

/**
 * BENCH_FIND_UPGRADE=1: seed at the schema before the times and search keys and time the service's upgrade (on
 * PostgreSQL, minutes for 1,000,000 plants); otherwise seed the current schema directly, keys and times included.
 */
export const UPGRADE = process.env.BENCH_FIND_UPGRADE === '1';

/** Starts the service on the store and waits for it to be ready (migrations, key fill): the upgrade, timed. */
async function upgrade(url: string, runtime: Runtime = CURRENT): Promise<number> {
  const server = await start('service', url, {}, { ...runtime, readyWithinMs: 1_800_000 });
  const ms = performance.now() - server.startedAt;
  await server.stop();
  return ms;
}

const timeText = (id: number) => new Date(FIRST_MS + id * STEP_MS).toISOString();

/** SQLite: one transaction of prepared inserts (plants and their events). */
export async function seedSqlite(count: number = STORED): Promise<Seeded> {
  const url = freshStore(`find-${count}`);
  const file = url.slice('file:'.length);
  const started = performance.now();
  const migrations = predecessorMigrations('sqlite');
  if (!UPGRADE) await upgrade(url);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  if (UPGRADE) {
    db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    const record = db.prepare('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)');
    for (const migration of migrations) {
      db.exec(migration.sql);
      record.run(migration.name, migration.checksum, new Date().toISOString());
    }
  }
  const plant = UPGRADE
    ? db.prepare('INSERT INTO plants (id, name, tag, version) VALUES (?, ?, ?, ?)')
    : db.prepare('INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_key) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const event = db.prepare("INSERT INTO plant_events (pos, kind, plant_id, name, tag, at) VALUES (?, 'created', ?, ?, ?, ?)");
  db.transaction(() => {
    for (let id = 1; id <= count; id += 1) {
      const name = nameOf(id);
      const tag = tagOf(id);
      const at = FIRST_MS + id * STEP_MS;
      if (UPGRADE) {
        plant.run(id, name, tag, id);
        event.run(id, id, name, tag, at);
      } else {
        const time = timeText(id);
        plant.run(id, name, tag, id, time, time, searchKey(name));
      }
    }
    // Events older than EVENTS_RETENTION (24 h by default) are pruned: a year of creates leaves none, only the
    // position they reached. Seeded events would be deleted by the service's first pruning, inside a measurement.
    if (!UPGRADE) db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('plant_events', ?)").run(BigInt(count));
  })();
  // The search index (migrations/sqlite/010) as the service's indexer leaves it once it has caught up: every key
  // in it, covering every event. The indexer would build it behind the commits, 1,000 plants a turn.
  const indexed = !UPGRADE && db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'plants_search'").get() !== undefined;
  if (indexed) {
    db.transaction(() => {
      db.exec('INSERT INTO plants_search (rowid, name_key) SELECT id, name_key FROM plants');
      // BigInt: better-sqlite3 binds a number as REAL, and the service reads positions as int64 (bigint).
      db.prepare('UPDATE plants_search_state SET indexed_pos = ?, build_pos = NULL, build_after_id = NULL').run(BigInt(count));
    })();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const seedMs = performance.now() - started;
  if (!UPGRADE) return { url, seedMs, drop: () => Promise.resolve(), ...(indexed ? { note: 'with its search index (FTS5) filled by SQL' } : {}) };
  return { url, seedMs, upgradeMs: await upgrade(url), from: migrations.at(-1)?.name ?? 'no migration', drop: () => Promise.resolve() };
}

const sqlList = (words: readonly string[]) => `(ARRAY[${words.map((word) => `'${word.replace(/'/g, "''")}'`).join(', ')}]::text[])`;

/** PostgreSQL: a fresh database, one INSERT … SELECT FROM generate_series per table. */
export async function seedPostgres(count: number = STORED): Promise<Seeded & PgDatabase> {
  const database = await freshDatabase();
  const started = performance.now();
  const migrations = predecessorMigrations('postgres');
  if (!UPGRADE) await upgrade(database.url);
  await admin(async (client: pg.Client) => {
    if (UPGRADE) {
      await client.query('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)');
      for (const migration of migrations) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ($1, $2, now())', [migration.name, migration.checksum]);
      }
    }
    // nameOf and tagOf in SQL: h is hashOf(id); arrays are 1-based.
    const h = '((id * 2654435761) % 4294967296)';
    const g = GENERA.length;
    const s = SPECIES.length;
    const name =
      `${sqlList(GENERA)}[1 + ${h} % ${g}] || ' ' || ${sqlList(SPECIES)}[1 + (${h} / ${g}) % ${s}] || ` +
      `CASE WHEN (${h} / ${g * s}) % 4 = 0 THEN ' ''' || ${sqlList(CULTIVARS)}[1 + (${h} / ${g * s * 4}) % ${CULTIVARS.length}] || '''' ELSE '' END`;
    const tag = `CASE WHEN id % 3 = 0 THEN NULL ELSE ${sqlList(ROOMS)}[1 + id % ${ROOMS.length}] END`;
    const at = `${FIRST_MS} + id * ${STEP_MS}`;
    await client.query('BEGIN');
    await client.query(`CREATE TEMP TABLE seed ON COMMIT DROP AS SELECT id, ${name} AS name, ${tag} AS tag, ${at} AS at FROM generate_series(1, $1::bigint) AS id`, [count]);
    if (UPGRADE) {
      await client.query('INSERT INTO plants (id, name, tag, version) SELECT id, name, tag, id FROM seed');
      await client.query("INSERT INTO plant_events (pos, kind, plant_id, name, tag, at) SELECT id, 'created', id, name, tag, at FROM seed");
    } else {
      // The names are ASCII: lower() is searchKey for them.
      await client.query('INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_key) SELECT id, name, tag, id, plant_time_text(at), plant_time_text(at), lower(name) FROM seed');
      // No events: a year of creates is past EVENTS_RETENTION (as on SQLite above); the counter keeps their positions.
    }
    await client.query('UPDATE plant_event_counter SET last_pos = $1', [count]);
    await client.query('COMMIT');
    await client.query('VACUUM ANALYZE plants, plant_events');
  }, database.url);
  const seedMs = performance.now() - started;
  if (!UPGRADE) return { ...database, seedMs };
  const upgradeMs = await upgrade(database.url);
  // What autovacuum would do soon after: statistics of the upgraded table for the planner.
  await admin((client: pg.Client) => client.query('VACUUM ANALYZE plants, plant_events'), database.url);
  return { ...database, seedMs, upgradeMs, from: migrations.at(-1)?.name ?? 'no migration' };
}

/** Checks that the SQL seeding of PostgreSQL names plants as nameOf does (a sample). */
export async function checkNames(url: string): Promise<void> {
  const ids = [1, 2, 3, 777, 123_456];
  const { rows } = await admin((client: pg.Client) => client.query<{ id: string; name: string }>('SELECT id, name FROM plants WHERE id = ANY ($1::bigint[]) ORDER BY id', [ids]), url);
  for (const row of rows) if (row.name !== nameOf(Number(row.id))) throw new Error(`seeded name of ${row.id} is ${row.name}, not ${nameOf(Number(row.id))}`);
}
