// The writes section on PostgreSQL (BENCH_WRITES_PARTS=postgres): the work of a write is shared between the
// service and PostgreSQL's backends, which callgrind on the service does not see, so each load is measured by
// creates per second and CPU per plant created (the service's process and the database's backends, from /proc),
// in alternating rounds on one running service with the unkeyed creates measured twice for the A/A. The loads:
// creates without a key, with a new Idempotency-Key each, with a key on one create in ten (what a group commit that
// carries a keyed write, whose statement also stores its answer, costs the unkeyed writes in it), and batches of
// BATCH creates at 2 connections and at 1; replays of 1,000 keys in turn and reads by id of WRITES_STORED plants
// seeded first (per request: the A/A beside them is the unkeyed creates').
import type autocannon from 'autocannon';
import { backendTicks, freshDatabase } from './postgres.section';
import { cpuTicks, createRequests, f0, f1, f2, load, median, met, newId, ROUNDS, start, TICKS_PER_SECOND, TOKEN, type Started } from './lib';
import { BATCH, batchRequests, keyedCreateRequests, readRequests, replaysInTurn, storeAnswer, WRITES_STORED } from './writes.loads';
import { verdict, type Row } from './writes.verdict';

const PG_SECONDS = Number(process.env.BENCH_WRITES_PG_SECONDS ?? process.env.BENCH_WRITES_SECONDS ?? 5);
const SINGLE_CONNECTIONS = 50;
const READ_CONNECTIONS = 20;
/**
 * The keys the replay load sends again, each with the plant its first request created: many keys, taken in turn,
 * since requests with one key at once are answered 409 while one of them is in flight (the write reads the key).
 */
const REPLAYED = Array.from({ length: 1_000 }, (_, index) => ({ key: `bench-pg-replay-${process.pid}-${index}`, id: newId() }));
const BATCH_CONNECTIONS = 2;
/** The mixed load: one create in MIXED_EVERY carries a key. */
const MIXED_EVERY = 10;

type Load = { requests: () => autocannon.Request[]; connections: number; plantsPerRequest: number };
type Run = { rps: number; plantsPerS: number; p50: number; p99: number; serviceUs: number; backendUs: number; failed: number };

const LOADS = {
  plain: { requests: () => createRequests(), connections: SINGLE_CONNECTIONS, plantsPerRequest: 1 },
  keyed: { requests: () => keyedCreateRequests(), connections: SINGLE_CONNECTIONS, plantsPerRequest: 1 },
  plainAgain: { requests: () => createRequests(), connections: SINGLE_CONNECTIONS, plantsPerRequest: 1 },
  mixed: { requests: () => keyedCreateRequests(MIXED_EVERY), connections: SINGLE_CONNECTIONS, plantsPerRequest: 1 },
  batch: { requests: batchRequests, connections: BATCH_CONNECTIONS, plantsPerRequest: BATCH },
  batchAlone: { requests: batchRequests, connections: 1, plantsPerRequest: BATCH },
  // Per request, not per plant: a replay writes nothing, a read reads one plant.
  replay: { requests: () => replaysInTurn(REPLAYED), connections: READ_CONNECTIONS, plantsPerRequest: 1 },
  read: { requests: readRequests, connections: READ_CONNECTIONS, plantsPerRequest: 1 },
} satisfies Record<string, Load>;
type Name = keyof typeof LOADS;

/** One load on the running service: 1 s warm-up, then PG_SECONDS measured with the CPU of both processes. */
async function measureLoad(server: Started, url: string, spec: Load): Promise<Run> {
  await load(server.port, 1, { connections: spec.connections, requests: spec.requests() });
  const pid = server.child.pid ?? 0;
  const [own, backends] = [cpuTicks(pid), await backendTicks(url)];
  const result = await load(server.port, PG_SECONDS, { connections: spec.connections, requests: spec.requests(), timeoutSeconds: 30 });
  const [ownTicks, backendTicksUsed] = [cpuTicks(pid) - own, (await backendTicks(url)) - backends];
  const plants = Math.max(1, (result.requests.total - result.non2xx) * spec.plantsPerRequest);
  const us = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6) / plants;
  return {
    rps: result.requests.total / PG_SECONDS,
    plantsPerS: plants / PG_SECONDS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    serviceUs: us(ownTicks),
    backendUs: us(backendTicksUsed),
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

type Runs = Record<Name, Run[]>;
const m = (runs: Run[], key: keyof Run): number => median(runs.map((run) => run[key]));
const cpuOf = (runs: Run[]): number => median(runs.map((run) => run.serviceUs + run.backendUs));
const perRound = (runs: Run[], against: Run[], of: (run: Run) => number): string =>
  runs.map((run, i) => f2(of(run) / (against[i] === undefined ? Number.NaN : of(against[i])))).join(', ');
const cpuText = (runs: Run[]): string => `${f0(cpuOf(runs))} µs (service ${f0(m(runs, 'serviceUs'))}, backends ${f0(m(runs, 'backendUs'))})`;

/** `runs` against `base`: plants per second (higher is better) and CPU per plant (base / runs: higher is better). */
function compare(runs: Run[], base: Run[]): { rate: number; rateText: string; cpu: number; cpuText: string } {
  const rate = m(runs, 'plantsPerS') / m(base, 'plantsPerS');
  const cpu = cpuOf(base) / cpuOf(runs);
  return {
    rate,
    rateText: `${f2(rate)} (rounds ${perRound(runs, base, (run) => run.plantsPerS)})`,
    cpu,
    cpuText: `${f2(cpu)} (rounds ${perRound(base, runs, (run) => run.serviceUs + run.backendUs)})`,
  };
}

function rowsOf(runs: Runs): Row[] {
  const aa = compare(runs.plainAgain, runs.plain);
  const keyed = compare(runs.keyed, runs.plain);
  const mixed = compare(runs.mixed, runs.plain);
  const batch = compare(runs.batch, runs.plain);
  const replay = compare(runs.replay, runs.read);
  const p99 = m(runs.batch, 'p99');
  const p99Alone = m(runs.batchAlone, 'p99');
  const aaRate = `again / first ${aa.rateText}`;
  const aaCpu = `again / first ${aa.cpuText}`;
  const single = `${f0(m(runs.plain, 'plantsPerS'))} creates/s, ${cpuText(runs.plain)} CPU per create`;
  return [
    { row: `keyed / unkeyed POST /plants (${SINGLE_CONNECTIONS} connections), creates per second (${f0(m(runs.keyed, 'plantsPerS'))} against ${single})`, value: keyed.rateText, aa: aaRate, target: '≥ 0.9', met: verdict(keyed.rate, 0.9, true, aa.rate) },
    { row: `unkeyed / keyed, CPU per create, service and PostgreSQL backends (keyed: ${cpuText(runs.keyed)})`, value: keyed.cpuText, aa: aaCpu, target: '≥ 0.9', met: verdict(keyed.cpu, 0.9, true, aa.cpu) },
    { row: `one create in ${MIXED_EVERY} keyed / none keyed, creates per second (${f0(m(runs.mixed, 'plantsPerS'))} creates/s): group commits that carry a keyed write`, value: mixed.rateText, aa: aaRate, target: 'reported', met: '' },
    { row: `none keyed / one in ${MIXED_EVERY} keyed, CPU per create (one in ${MIXED_EVERY}: ${cpuText(runs.mixed)})`, value: mixed.cpuText, aa: aaCpu, target: 'reported', met: '' },
    { row: `POST /plants/batch of ${BATCH.toLocaleString('en')} creates, ${BATCH_CONNECTIONS} connections: p99`, value: `p99 ${f1(p99)} ms (p50 ${f1(m(runs.batch, 'p50'))}; ${f0(m(runs.batch, 'plantsPerS'))} plants/s)`, aa: `1 connection: p99 ${f1(p99Alone)} ms`, target: 'p99 ≤ 50 ms', met: met(p99 <= 50) },
    { row: `POST /plants/batch of ${BATCH.toLocaleString('en')} creates, 1 connection (one batch at a time): p99`, value: `p99 ${f1(p99Alone)} ms (p50 ${f1(m(runs.batchAlone, 'p50'))}; ${f0(m(runs.batchAlone, 'plantsPerS'))} plants/s)`, aa: '', target: 'p99 ≤ 50 ms', met: met(p99Alone <= 50) },
    { row: `plants per second: batches (${BATCH_CONNECTIONS} connections) / one per request (${SINGLE_CONNECTIONS} connections)`, value: batch.rateText, aa: aaRate, target: '≥ 10', met: verdict(batch.rate, 10, true, aa.rate) },
    { row: `CPU per plant: one per request / in batches (batches: ${cpuText(runs.batch)})`, value: batch.cpuText, aa: aaCpu, target: 'reported', met: '' },
    { row: `replay of one Idempotency-Key / GET /plants/{id} (${READ_CONNECTIONS} connections), requests per second (${f0(m(runs.replay, 'plantsPerS'))} against ${f0(m(runs.read, 'plantsPerS'))})`, value: replay.rateText, aa: aaRate, target: '≥ 1', met: verdict(replay.rate, 1, true, aa.rate) },
    { row: `read / replay, CPU per request, service and backends (replay: ${cpuText(runs.replay)}; read: ${cpuText(runs.read)})`, value: replay.cpuText, aa: aaCpu, target: '≥ 1', met: verdict(replay.cpu, 1, true, aa.cpu) },
  ];
}

/** The plants the reads ask for (ids 1 to WRITES_STORED), and the replayed keys' first answers. */
async function seedReads(port: number): Promise<void> {
  for (let first = 1; first <= WRITES_STORED; first += BATCH) {
    const operations = Array.from({ length: Math.min(BATCH, WRITES_STORED - first + 1) }, (_, index) => ({ op: 'create', plant: { id: first + index, name: `Monstera ${first + index}`, tag: 'bench' } }));
    const response = await fetch(`http://127.0.0.1:${port}/plants/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ operations }),
    });
    await response.text();
    if (response.status !== 200) throw new Error(`seeding the plants to read answered ${response.status}`);
  }
  for (const { key, id } of REPLAYED) await storeAnswer(port, key, id);
}

export async function postgresRows(): Promise<{ rows: Row[]; failed: number }> {
  const database = await freshDatabase();
  try {
    const server = await start('service', database.url);
    try {
      await seedReads(server.port);
      const names = Object.keys(LOADS) as Name[];
      const runs = Object.fromEntries(names.map((name) => [name, [] as Run[]])) as Runs;
      for (let round = 1; round <= ROUNDS; round += 1) {
        for (const name of round % 2 === 1 ? names : [...names].reverse()) {
          const run = await measureLoad(server, database.url, LOADS[name]);
          runs[name].push(run);
          console.error(`writes postgres round ${round} ${name}: ${f0(run.plantsPerS)} plants/s, p99 ${run.p99} ms, CPU ${f0(run.serviceUs)} + ${f0(run.backendUs)} µs per plant, failed ${run.failed}`);
        }
      }
      return { rows: rowsOf(runs), failed: Object.values(runs).flat().reduce((sum, run) => sum + run.failed, 0) };
    } finally {
      await server.stop();
    }
  } finally {
    await database.drop();
  }
}
