// The idempotency table at KEYS keys on PostgreSQL (BENCH_WRITES_PARTS=postgres-keys): the bytes its rows and
// indexes take (pg_total_relation_size, seeded by SQL into a migrated database), and creates while the prune deletes
// expired keys (IDEMPOTENCY_TTL=1s: a batch of 1,000 every second) against the same creates on a database without
// keys, in alternating rounds, each on a fresh database.
import pg from 'pg';
import { verdict, type Row } from './writes.verdict';
import { KEYS } from './writes.keys';
import { freshDatabase, type PgDatabase } from './postgres.section';
import { alternate, f0, failures, measure, start, throughputRatio, type Figures } from './lib';

const PRUNE_ENV = { env: { IDEMPOTENCY_TTL: '1s' } };

/** A fresh database the service has migrated (it migrates at start). */
async function migrated(): Promise<PgDatabase> {
  const database = await freshDatabase();
  const server = await start('service', database.url);
  await server.stop();
  return database;
}

/** Seeds KEYS keys of one caller, expiring `expiresIn` from now (negative: expired); answers the bytes they add. */
async function seedKeys(url: string, expiresIn: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const size = async () => Number((await client.query<{ bytes: string }>("SELECT pg_total_relation_size('idempotency_keys') AS bytes")).rows[0]?.bytes);
    const before = await size();
    // As the service writes them: a UUID key, the SHA-256 fingerprint in hex, a create's answer.
    await client.query(
      `INSERT INTO idempotency_keys (caller, key, fingerprint, status, etag, location, body, expires_at)
       SELECT 'token:' || lpad('1', 64, '0'), gen_random_uuid()::text, lpad(to_hex(i), 64, '0'), 201, '"' || i || '"',
         '/plants/' || (20000000000 + i), '{"id":' || (20000000000 + i) || ',"name":"Monstera ' || (20000000000 + i) || '","tag":"bench"}',
         now() + $2::interval + (i % 1000) * interval '1 millisecond'
       FROM generate_series(1, $1::int) AS i`,
      [KEYS, expiresIn],
    );
    await client.query('VACUUM ANALYZE idempotency_keys');
    return (await size()) - before;
  } finally {
    await client.end();
  }
}

/** Creates on a fresh database, `seeded` with expired keys or not; the database dropped after. */
async function createsOn(seeded: boolean): Promise<Figures> {
  const database = await migrated();
  try {
    if (seeded) await seedKeys(database.url, '-1 hour');
    return await measure('service', database.url, PRUNE_ENV);
  } finally {
    await database.drop();
  }
}

export async function postgresKeyRows(): Promise<{ rows: Row[]; failed: number }> {
  const database = await migrated();
  let bytes: number;
  let seedS: number;
  try {
    const began = performance.now();
    bytes = await seedKeys(database.url, '1 day');
    seedS = (performance.now() - began) / 1000;
  } finally {
    await database.drop();
  }
  const { medians, runs } = await alternate({ plain: () => createsOn(false), prune: () => createsOn(true), again: () => createsOn(false) });
  const rows: Row[] = [
    {
      row: `PostgreSQL: idempotency_keys with ${KEYS.toLocaleString('en')} keys (UUID keys, one caller, a create's answer each), table, TOAST and indexes`,
      value: `${bytes.toLocaleString('en')} bytes (${f0(bytes / KEYS)} per key; seeded in ${f0(seedS)} s)`,
      aa: '',
      target: 'reported',
      met: '',
    },
    {
      row: `PostgreSQL: POST /plants while the prune deletes ${KEYS.toLocaleString('en')} expired keys, 1,000 a second / on a database without keys, throughput (${f0(medians.prune.rps)} against ${f0(medians.plain.rps)} req/s; p99 ${medians.prune.p99} against ${medians.plain.p99} ms)`,
      value: throughputRatio(runs.prune, runs.plain),
      aa: `again / plain ${throughputRatio(runs.again, runs.plain)}`,
      target: '≥ 0.9',
      met: verdict(medians.prune.rps / medians.plain.rps, 0.9, true, medians.again.rps / medians.plain.rps),
    },
  ];
  return { rows, failed: failures(...runs.plain, ...runs.prune, ...runs.again) };
}
