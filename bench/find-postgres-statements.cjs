// The find section's PostgreSQL statements alone (docs/performance/find.md, run E): GET /plants's statements
// from two builds of src/plants/plant.list.postgres.ts, run through pg as named statements (as the service runs
// them) on a seeded store, interleaved request by request with the order alternating, the first round dropped.
// Usage, after `npm run bench` has built dist/ and dist-bench/ and a store is seeded (bench/find.seed.ts):
//   node bench/find-postgres-statements.cjs <database url> <dist/plants of the build before>
// A one-off tool beside the bench, not part of `npm run bench`.
const path = require('node:path');
const pg = require('pg');

const root = path.join(__dirname, '..');
const NEW = require(path.join(root, 'dist/plants/plant.list.postgres.js'));
const OLD = require(path.join(process.argv[3], 'plant.list.postgres.js'));
const { searches } = require(path.join(root, 'dist-bench/find.reads.js'));
const url = process.argv[2];

const stats = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (fraction) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))].toFixed(2);
  return `p50 ${at(0.5)} p90 ${at(0.9)} p99 ${at(0.99)} (n ${sorted.length})`;
};

async function timed(client, prefix, statement) {
  const began = performance.now();
  await client.query({ name: prefix + statement.name, text: statement.text, values: statement.values });
  return performance.now() - began;
}

/** Each input through a then b (or b then a, alternating), `rounds` times; the first round is the warm-up. */
async function pair(label, a, b, inputs, rounds) {
  const ta = [];
  const tb = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const [i, input] of inputs.entries()) {
      const sides = (i + round) % 2 === 0 ? [a, b] : [b, a];
      for (const side of sides) (side === a ? ta : tb).push(await side.run(input));
    }
  }
  const kept = (times) => times.slice(times.length / rounds);
  console.log(`${label}\n  ${a.label}: ${stats(kept(ta))}\n  ${b.label}: ${stats(kept(tb))}`);
}

/** Keys of every `step`-th plant in name order from `offset` (400 of them): deep pages at distinct depths. */
async function nameKeys(client, step, offset) {
  const { rows } = await client.query(
    `SELECT name_key, name, id FROM (SELECT name_key, name, id, row_number() OVER (ORDER BY name_key, name COLLATE "C", id) AS n FROM plants) s WHERE n % ${step} = ${offset} LIMIT 400`,
  );
  return rows.map((row) => [row.name_key, row.name, BigInt(row.id)]);
}

async function main() {
  const client = new pg.Client({ connectionString: url });
  const heapClient = new pg.Client({ connectionString: url });
  await client.connect();
  await heapClient.connect();
  // An index scan with one heap lookup per plant, as plants_by_name before migrations/postgres/013.
  await heapClient.query('SET enable_indexonlyscan = off');
  const before = (query) => timed(client, 'before_', OLD.listStatement(query));
  const after = (query) => timed(client, 'after_', NEW.listStatement(query));
  await pair('q of 3 characters, sort=id, limit=100 (the bench\'s 200 searches)', { label: 'before', run: (q) => before({ limit: 100, search: q, sort: 'id' }) }, { label: 'after', run: (q) => after({ limit: 100, search: q, sort: 'id' }) }, searches(3), 3);
  const counted = { limit: 100, search: 'monstera deliciosa', sort: 'id', count: true };
  await pair('Prefer: count=exact, q=monstera deliciosa, sort=id', { label: 'before', run: () => before(counted) }, { label: 'after', run: () => after(counted) }, Array(40).fill(0), 3);
  for (const offset of [7, 1000, 1900]) {
    const keys = await nameKeys(client, 2473, offset);
    const byName = (i, on) => timed(on, on === client ? 'after_' : 'heap_', NEW.listStatement({ limit: 100, sort: 'name', from: keys[i] }));
    const byId = (i) => after({ limit: 100, sort: 'id', after: BigInt(i * 2473 + offset) });
    const times = { heap: [], only: [], id: [] };
    for (let i = 0; i < keys.length; i += 1) {
      const runs = [['heap', () => byName(i, heapClient)], ['only', () => byName(i, client)], ['id', () => byId(i)]];
      for (const [name, run] of i % 2 === 0 ? runs : runs.reverse()) times[name].push(await run());
    }
    console.log(`deep pages at 400 distinct depths (offset ${offset})\n  sort=name, heap lookups: ${stats(times.heap)}\n  sort=name, index-only: ${stats(times.only)}\n  sort=id: ${stats(times.id)}`);
  }
  // The bench's deep rows cycle 30 pages: the same 30 depths, 4 rounds, a warm cache.
  const warm = (await nameKeys(client, 33_333, 7)).slice(0, 30);
  const warmName = (on, prefix) => (i) => timed(on, prefix, NEW.listStatement({ limit: 100, sort: 'name', from: warm[i] }));
  await pair('deep sort=name pages, 30 depths repeated (warm)', { label: 'heap lookups', run: warmName(heapClient, 'heap_') }, { label: 'index-only', run: warmName(client, 'after_') }, warm.map((_, i) => i), 4);
  await client.end();
  await heapClient.end();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
