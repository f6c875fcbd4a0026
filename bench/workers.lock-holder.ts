// Another process that takes SQLite's write lock on the service's file, for the lock part of BENCH_ONLY=workers
// (bench/workers.lock.ts starts it as node dist-bench/workers.lock-holder.js <file>). One process for the whole
// run, so the windows without the lock have it running too. On each line `hold <ms>` from stdin it takes
// BEGIN IMMEDIATE (waiting in the driver up to 10 s for a commit of the service to end), prints `locked`, keeps
// the lock <ms> with its own loop idle, rolls back and prints `released <ms held>`. It writes nothing.
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: workers.lock-holder.js <sqlite file>');
const db = new Database(file, { timeout: 10_000 });

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, ms] = line.trim().split(' ');
  if (command !== 'hold') return;
  db.exec('BEGIN IMMEDIATE');
  const lockedAt = performance.now();
  process.stdout.write('locked\n');
  setTimeout(() => {
    db.exec('ROLLBACK');
    process.stdout.write(`released ${(performance.now() - lockedAt).toFixed(0)}\n`);
  }, Number(ms));
});
process.stdin.on('end', () => db.close());
