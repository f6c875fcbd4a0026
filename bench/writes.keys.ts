// The idempotency table at KEYS keys (BENCH_WRITES_PARTS=keys): the bytes its rows and index take in a SQLite
// store, seeded by SQL into a copy of the writes section's store, and creates while the prune deletes expired
// keys (IDEMPOTENCY_TTL=1s: a batch of 1,000 every second) against the same creates on the store without keys.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { verdict, type Row } from './writes.verdict';
import { alternate, f0, failures, freshStore, measure, throughputRatio, type Figures } from './lib';

export const KEYS = Number(process.env.BENCH_WRITES_KEYS ?? 1_000_000);
const PRUNE_ENV = { env: { IDEMPOTENCY_TTL: '1s' } };


const hex = (n: number): string => n.toString(16).padStart(64, '0');

/** A copy of `stored` with KEYS keys of one caller, expired by `expiresAt`; returns its file and the bytes they add. */
function seedKeys(stored: string, name: string, expiresAt: number): { file: string; bytes: number } {
  const file = freshStore(name, stored).slice('file:'.length);
  const db = new Database(file);
  const pages = () => (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
  const before = pages();
  const insert = db.prepare('INSERT INTO idempotency_keys (caller, key, fingerprint, status, etag, location, body, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const caller = `token:${hex(1)}`;
  db.transaction(() => {
    for (let i = 1; i <= KEYS; i += 1) {
      const id = 20_000_000_000 + i;
      insert.run(caller, randomUUID(), hex(i), 201, `"${i}"`, `/plants/${id}`, `{"id":${id},"name":"Monstera ${id}","tag":"bench"}`, expiresAt + (i % 1000));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  const bytes = pages() - before;
  db.close();
  return { file, bytes };
}

export async function keyRows(stored: string): Promise<{ rows: Row[]; failed: number }> {
  const began = performance.now();
  const live = seedKeys(stored, 'writes-keys-live', Date.now() + 86_400_000);
  const seedS = (performance.now() - began) / 1000;
  const expired = seedKeys(stored, 'writes-keys-expired', Date.now() - 3_600_000);
  const { medians, runs } = await alternate({
    plain: () => measure('service', freshStore('writes-prune-plain', stored), PRUNE_ENV),
    prune: () => measure('service', freshStore('writes-prune', expired.file), PRUNE_ENV),
    again: () => measure('service', freshStore('writes-prune-again', stored), PRUNE_ENV),
  });
  const rows: Row[] = [
    {
      row: `idempotency_keys with ${KEYS.toLocaleString('en')} keys (UUID keys, one caller, a create's answer each), table and index`,
      value: `${live.bytes.toLocaleString('en')} bytes (${f0(live.bytes / KEYS)} per key; seeded in ${f0(seedS)} s)`,
      aa: '',
      target: 'reported',
      met: '',
    },
    {
      row: `POST /plants while the prune deletes ${KEYS.toLocaleString('en')} expired keys, 1,000 a second / on the store without keys, throughput (${f0(medians.prune.rps)} against ${f0(medians.plain.rps)} req/s; p99 ${medians.prune.p99} against ${medians.plain.p99} ms)`,
      value: throughputRatio(runs.prune, runs.plain),
      aa: `again / plain ${throughputRatio(runs.again, runs.plain)}`,
      target: '≥ 0.9',
      met: verdict(medians.prune.rps / medians.plain.rps, 0.9, true, medians.again.rps / medians.plain.rps),
    },
  ];
  const all: Figures[] = [...runs.plain, ...runs.prune, ...runs.again];
  return { rows, failed: failures(...all) };
}
