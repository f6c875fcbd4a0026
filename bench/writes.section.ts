// Writes (BENCH_ONLY=writes, issue 34), on SQLite: a batch of BATCH creates against the same creates one per
// request (plants per second, the batch's p99), and a replay of an Idempotency-Key against a read by id, each in
// alternating rounds on one running server with its A/A; PUT replacing stored plants and a create with an
// Idempotency-Key against a plain create, in instructions under callgrind (bench/instructions.section.ts), with
// the plain create counted twice for the A/A; on PostgreSQL the same writes by throughput and CPU per plant
// (bench/writes.postgres.ts). BENCH_WRITES_PARTS=throughput,instructions,postgres,keys,postgres-keys runs some of
// the parts (keys and postgres-keys, the idempotency table at 1,000,000 keys and its prune, bench/writes.keys.ts
// and bench/writes.keys.postgres.ts, only when named).
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import type autocannon from 'autocannon';
import { storeOfPlants } from './create.section';
import { countInstructions, type Workload } from './instructions.section';
import { createRequests, CURRENT, f0, f1, f2, freshStore, load, median, met, newId, ROUNDS, start, type SectionResult, type Started } from './lib';
import { keyRows } from './writes.keys';
import { postgresKeyRows } from './writes.keys.postgres';
import { postgresRows } from './writes.postgres';
import { verdict, type Row } from './writes.verdict';
import { BATCH, batchRequests, keyedCreateRequests, putRequests, readRequests, replayRequests, storeAnswer, WRITES_STORED } from './writes.loads';

const WRITES_SECONDS = Number(process.env.BENCH_WRITES_SECONDS ?? 3);
const PARTS = new Set((process.env.BENCH_WRITES_PARTS ?? 'throughput,instructions,postgres').split(',').map((part) => part.trim()));
const BATCH_CONNECTIONS = 2;
const SINGLE_CONNECTIONS = 50;
const READ_CONNECTIONS = 20;
// Under callgrind: fewer requests than the instructions section, to keep the part within a few minutes.
const WARMUP = 500;
const COUNTED = 1_000;

type Run = { rps: number; p50: number; p99: number; failed: number };
type Spec = { requests: () => autocannon.Request[]; connections: number };

/** Each load ROUNDS times on one running server, each round in the reverse order of the last, 1 s warm-up each. */
async function rounds<K extends string>(server: Started, specs: Record<K, Spec>, label: string): Promise<Record<K, Run[]>> {
  const names = Object.keys(specs) as K[];
  const runs = Object.fromEntries(names.map((name) => [name, [] as Run[]])) as Record<K, Run[]>;
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const name of round % 2 === 1 ? names : [...names].reverse()) {
      const spec = specs[name];
      await load(server.port, 1, { connections: spec.connections, requests: spec.requests() });
      const result = await load(server.port, WRITES_SECONDS, { connections: spec.connections, requests: spec.requests(), timeoutSeconds: 30 });
      const run = { rps: result.requests.total / WRITES_SECONDS, p50: result.latency.p50, p99: result.latency.p99, failed: result.non2xx + result.errors + result.timeouts };
      runs[name].push(run);
      console.error(`writes ${label} round ${round} ${name}: ${f0(run.rps)} req/s, p99 ${run.p99} ms, failed ${run.failed}`);
    }
  }
  return runs;
}

const rpsOf = (runs: Run[]): number => median(runs.map((run) => run.rps));
const ratioText = (value: number, runs: Run[], against: Run[], scale = 1): string =>
  `${f2(value)} (rounds ${runs.map((run, i) => f2((scale * run.rps) / (against[i]?.rps ?? Number.NaN))).join(', ')})`;
const failedOf = (runs: Record<string, Run[]>): number => Object.values(runs).flat().reduce((sum, run) => sum + run.failed, 0);

async function batchRows(): Promise<{ rows: Row[]; failed: number }> {
  const server = await start('service', freshStore('writes-batch'));
  try {
    const runs = await rounds(
      server,
      {
        batch: { requests: batchRequests, connections: BATCH_CONNECTIONS },
        single: { requests: () => createRequests(), connections: SINGLE_CONNECTIONS },
        batchAgain: { requests: batchRequests, connections: BATCH_CONNECTIONS },
        alone: { requests: batchRequests, connections: 1 },
      },
      'batch',
    );
    const aa = rpsOf(runs.batchAgain) / rpsOf(runs.batch);
    const ratio = (rpsOf(runs.batch) * BATCH) / rpsOf(runs.single);
    const p99 = median(runs.batch.map((run) => run.p99));
    const p99Again = median(runs.batchAgain.map((run) => run.p99));
    const aaText = `again / first ${ratioText(aa, runs.batchAgain, runs.batch)}`;
    const rows: Row[] = [
      {
        row: `POST /plants/batch of ${BATCH.toLocaleString('en')} creates, ${BATCH_CONNECTIONS} connections: p99`,
        value: `p99 ${f1(p99)} ms (p50 ${f1(median(runs.batch.map((run) => run.p50)))}; ${f0(rpsOf(runs.batch) * BATCH)} plants/s)`,
        aa: `again: p99 ${f1(p99Again)} ms`,
        target: 'p99 ≤ 50 ms',
        met: verdict(p99, 50, false, p99Again / p99),
      },
      {
        row: `POST /plants/batch of ${BATCH.toLocaleString('en')} creates, 1 connection (one batch at a time): p99`,
        value: `p99 ${f1(median(runs.alone.map((run) => run.p99)))} ms (p50 ${f1(median(runs.alone.map((run) => run.p50)))}; ${f0(rpsOf(runs.alone) * BATCH)} plants/s)`,
        aa: `2 connections again: p99 ${f1(p99Again)} ms`,
        target: 'p99 ≤ 50 ms',
        met: met(median(runs.alone.map((run) => run.p99)) <= 50),
      },
      {
        row: `plants per second: batches / one per request (POST /plants, ${SINGLE_CONNECTIONS} connections, ${f0(rpsOf(runs.single))} req/s)`,
        value: ratioText(ratio, runs.batch, runs.single, BATCH),
        aa: aaText,
        target: '≥ 10',
        met: verdict(ratio, 10, true, aa),
      },
    ];
    return { rows, failed: failedOf(runs) };
  } finally {
    await server.stop();
  }
}

async function replayRows(stored: string): Promise<{ rows: Row[]; failed: number }> {
  const server = await start('service', freshStore('writes-replay', stored));
  try {
    const key = `bench-replay-${process.pid}`;
    const id = newId();
    await storeAnswer(server.port, key, id);
    const runs = await rounds(
      server,
      {
        replay: { requests: () => replayRequests(key, id), connections: READ_CONNECTIONS },
        read: { requests: readRequests, connections: READ_CONNECTIONS },
        readAgain: { requests: readRequests, connections: READ_CONNECTIONS },
      },
      'replay',
    );
    const aa = rpsOf(runs.readAgain) / rpsOf(runs.read);
    const ratio = rpsOf(runs.replay) / rpsOf(runs.read);
    const row: Row = {
      row: `replay of one Idempotency-Key (POST /plants, same key and body) / GET /plants/{id}, ${READ_CONNECTIONS} connections, throughput (${f0(rpsOf(runs.replay))} against ${f0(rpsOf(runs.read))} req/s)`,
      value: ratioText(ratio, runs.replay, runs.read),
      aa: `read again / read ${ratioText(aa, runs.readAgain, runs.read)}`,
      target: '≥ 1',
      met: verdict(ratio, 1, true, aa),
    };
    return { rows: [row], failed: failedOf(runs) };
  } finally {
    await server.stop();
  }
}

async function instructionRows(stored: string): Promise<{ rows: Row[]; failed: number }> {
  if (spawnSync('valgrind', ['--version']).status !== 0) return { rows: [], failed: 0 };
  const workloads: Record<string, Workload> = {
    create: { name: 'writes create', store: stored, requests: () => createRequests() },
    again: { name: 'writes create again', store: stored, requests: () => createRequests() },
    put: { name: 'writes put', store: stored, requests: putRequests },
    keyed: { name: 'writes keyed create', store: stored, requests: keyedCreateRequests },
    // The warm-up's first request stores the answer; every counted one is its replay.
    replay: { name: 'writes replay', store: stored, requests: () => replayRequests(`bench-replay-${process.pid}`, WRITES_STORED + 1) },
    read: { name: 'writes read', store: stored, requests: readRequests },
  };
  // All at once on both cores: each meets the same conditions (a create's count moves with its arrival rate).
  // Six servers under valgrind on two shared cores: a start may take many minutes, which the count does not see.
  const runtime = { ...CURRENT, readyWithinMs: 1_800_000 };
  const settled = await Promise.allSettled(Object.entries(workloads).map(([name, workload]) => countInstructions(`writes-${name}`, runtime, workload, WARMUP, COUNTED)));
  const counts = settled.map((result) => {
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  });
  const [create, again, put, keyed, replay, read] = counts.map((count) => count.instructionsPerRequest) as [number, number, number, number, number, number];
  const aa = again / create;
  const n = (x: number) => Math.round(x).toLocaleString('en');
  const aaText = `create again / create ${aa.toFixed(3)} (${n(again)} against ${n(create)})`;
  const rows: Row[] = [
    {
      row: 'PUT replacing a stored plant (200) against POST /plants: create / PUT instructions per request',
      value: `${(create / put).toFixed(3)} (${n(put)} per PUT, ${n(create)} per create)`,
      aa: aaText,
      target: '≥ 0.9',
      met: verdict(create / put, 0.9, true, aa),
    },
    {
      row: 'POST /plants with a new Idempotency-Key against without: without / with instructions per request',
      value: `${(create / keyed).toFixed(3)} (${n(keyed)} with the key, ${n(create)} without)`,
      aa: aaText,
      target: '≥ 0.9',
      met: verdict(create / keyed, 0.9, true, aa),
    },
    {
      row: 'a replay of one Idempotency-Key (POST /plants, same key and body) against GET /plants/{id}: read / replay instructions per request',
      value: `${(read / replay).toFixed(3)} (${n(replay)} per replay, ${n(read)} per read)`,
      aa: aaText,
      target: '≥ 1',
      met: verdict(read / replay, 1, true, aa),
    },
  ];
  return { rows, failed: counts.reduce((sum, count) => sum + count.failed, 0) };
}

const table = (rows: Row[]): string[] => [
  '| row | value | A/A | target | met |',
  '|---|---|---|---|---|',
  ...rows.map((row) => `| ${row.row} | ${row.value} | ${row.aa} | ${row.target} | ${row.met} |`),
  '',
];

export async function writesSection(): Promise<SectionResult> {
  const began = performance.now();
  const loadBefore = (os.loadavg()[0] ?? 0).toFixed(1);
  const stored = await storeOfPlants(WRITES_STORED);
  const parts = [
    ...(PARTS.has('throughput') ? [await batchRows(), await replayRows(stored)] : []),
    ...(PARTS.has('instructions') ? [await instructionRows(stored)] : []),
    ...(PARTS.has('keys') ? [await keyRows(stored)] : []),
  ];
  const postgresParts = [...(PARTS.has('postgres') ? [await postgresRows()] : []), ...(PARTS.has('postgres-keys') ? [await postgresKeyRows()] : [])];
  const postgres = postgresParts.length === 0 ? undefined : { rows: postgresParts.flatMap((part) => part.rows), failed: postgresParts.reduce((sum, part) => sum + part.failed, 0) };
  const rows = parts.flatMap((part) => part.rows);
  const failed = [...parts, ...(postgres === undefined ? [] : [postgres])].reduce((sum, part) => sum + part.failed, 0);
  const lines = [
    `### Writes on SQLite: ${ROUNDS} alternating rounds of ${WRITES_SECONDS} s after 1 s warm-up each on one server; instructions under callgrind, ${WARMUP} requests to warm up, ${COUNTED} counted, 20 connections, on a store of ${WRITES_STORED.toLocaleString('en')} plants`,
    '',
    ...table(rows),
    ...(postgres === undefined
      ? []
      : [`### Writes on PostgreSQL: ${ROUNDS} alternating rounds on one service and a fresh database; plants per second and CPU per plant (the service and the database's backends, from /proc)`, '', ...table(postgres.rows)]),
    `Requests not answered 2xx: ${failed}. Section run time: ${f0((performance.now() - began) / 1000)} s; load average ${loadBefore} at its start, ${(os.loadavg()[0] ?? 0).toFixed(1)} at its end.`,
    '',
  ];
  return { lines, failed };
}
