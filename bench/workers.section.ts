// BENCH_ONLY=workers: issue 36's rows for several workers, driven by Debian's wrk (skipped with one line when
// /usr/bin/wrk is absent). Unlike the other sections, the service and wrk share both cores (taskset -c 0,1): the
// service needs them both for its workers, and WORKERS=auto reads the affinity. PostgreSQL (BENCH_DATABASE_URL)
// shares them too. Each part's figures beside its A/A:
//  1. throughput (bench/workers.throughput.ts): reads by id, first list pages, creates on PostgreSQL; WORKERS=auto against 1;
//  2. overload (bench/workers.overload.ts): creates at about 2x and 4x a closed loop's rate, WORKERS=auto;
//  3. storm (bench/workers.storm.ts): 1,000 clients connecting at once to an idle service, WORKERS=1 against auto;
//  4. lock (bench/workers.lock.ts): /healthz while another process holds SQLite's write lock 2 s, WORKERS=1 and auto;
//  5. streams (bench/workers.streams.ts): creates with 1,000 idle feed streams against none, WORKERS=auto, both stores;
//  6. credits (bench/workers.credits.ts): the rate limit without Redis, on against off, reads by id on SQLite.
// BENCH_WORKERS_PARTS=throughput,overload,storm,lock,streams,credits picks parts (default all).
import { seedPostgres } from './find.seed';
import { f2, freshStore, SECONDS, STORED, WARMUP_SECONDS, CONNECTIONS, ROUNDS, type SectionResult } from './lib';
import { freshDatabase } from './postgres.section';
import { alternateSides, busyAtOne, machineBound, ratioOf, SIDE_HEAD, sideRow, verdict, type LoadRun, type Side } from './workers.throughput';
import { overloadLines, overloadRounds } from './workers.overload';
import { stormLines, stormRounds } from './workers.storm';
import { lockLines, lockRuns } from './workers.lock';
import { streamsLines, streamsRuns } from './workers.streams';
import { creditLines, creditRounds } from './workers.credits';
import { WRK, wrkPresent, type WrkLoad } from './workers.wrk';

const PARTS = (process.env.BENCH_WORKERS_PARTS ?? 'throughput,overload,storm,lock,streams,credits').split(',').map((part) => part.trim());
const STORM_CLIENTS = 1000;

const LOADS: { load: WrkLoad; label: string; goal: number }[] = [
  { load: 'reads', label: `reads by id (GET /plants/{id} of ${STORED.toLocaleString('en')})`, goal: 1.6 },
  { load: 'pages', label: 'first list pages (GET /plants?limit=100)', goal: 1.6 },
  { load: 'creates', label: 'creates (POST /plants, new ids)', goal: 1.3 },
];

// A second worker can only add what the machine has left: when WORKERS=1 already kept nine tenths of the two cores
// busy (with wrk, PostgreSQL and whatever else ran), the run says nothing about the goal.
const FULL_CORES = 1.8;

function throughputVerdict(value: number, runs: Record<Side, LoadRun[]>, goal: number): string {
  const busy = busyAtOne(runs.one);
  if (busy >= FULL_CORES) return `not decided: the machine was full at WORKERS=1 (${f2(busy)} of 2 cores busy)`;
  return verdict(value, runs.autoAgain, runs.auto, 'rps', (x) => x >= goal, goal);
}

function throughputLines(results: { label: string; goal: number; runs: Record<Side, LoadRun[]> }[]): { lines: string[]; failed: number } {
  const lines = [
    `### Workers on PostgreSQL: WORKERS=auto against WORKERS=1, ${CONNECTIONS} connections (wrk, closed loop), ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
    '',
    'The service, wrk and PostgreSQL share both cores. CPU per request: the service is utime + stime of the supervisor and its workers (all threads); wrk its own; PostgreSQL the backends of the database; other work: the machine\'s busy cores (/proc/stat) less those three.',
    '',
    ...SIDE_HEAD,
  ];
  const goals = ['', '| goal | value (rounds) | A/A (rounds) | goal | verdict |', '|---|---:|---:|---|---|'];
  let failed = 0;
  for (const { label, goal, runs } of results) {
    lines.push(sideRow(`${label}, WORKERS=auto`, runs.auto), sideRow(`${label}, WORKERS=1`, runs.one), sideRow(`${label}, WORKERS=auto again`, runs.autoAgain));
    const rps = ratioOf(runs.auto, runs.one, 'rps');
    const rpsAa = ratioOf(runs.autoAgain, runs.auto, 'rps');
    const cpu = ratioOf(runs.auto, runs.one, 'serviceCpuUs');
    const cpuAa = ratioOf(runs.autoAgain, runs.auto, 'serviceCpuUs');
    goals.push(
      `| ${label}: throughput auto / 1 | ${rps.text} | ${rpsAa.text} | ≥ ${goal} | ${throughputVerdict(rps.value, runs, goal)} |`,
      `| ${label}: the most auto / 1 could be here (2 cores ÷ WORKERS=1's CPU per request of service, wrk and PostgreSQL, over its req/s) | ${f2(machineBound(runs.one))} | | | |`,
      `| ${label}: service CPU per request auto / 1 | ${cpu.text} | ${cpuAa.text} | ≤ 1.10 | ${verdict(cpu.value, runs.autoAgain, runs.auto, 'serviceCpuUs', (x) => x <= 1.1, 1.1)} |`,
    );
    failed += [...runs.auto, ...runs.one, ...runs.autoAgain].reduce((sum, run) => sum + run.failed, 0);
  }
  return { lines: [...lines, ...goals, ''], failed };
}

export async function workersSection(): Promise<SectionResult> {
  if (!wrkPresent()) return { lines: [`### Workers: skipped, no wrk at ${WRK} (Debian: apt-get install wrk)`, ''], failed: 0 };
  const lines: string[] = [];
  let failed = 0;
  // The PostgreSQL store of STORED plants, seeded only when a part reads it.
  let stored: Awaited<ReturnType<typeof seedPostgres>> | undefined;
  const seeded = async () => (stored ??= await seedPostgres(STORED));
  try {
    if (PARTS.includes('throughput')) {
      const results = [];
      for (const { load, label, goal } of LOADS) {
        if (load !== 'creates') {
          results.push({ label, goal, runs: await alternateSides(load, (await seeded()).url, STORED) });
          continue;
        }
        const database = await freshDatabase();
        try {
          results.push({ label, goal, runs: await alternateSides(load, database.url, STORED) });
        } finally {
          await database.drop();
        }
      }
      const part = throughputLines(results);
      lines.push(...part.lines);
      failed += part.failed;
    }
    if (PARTS.includes('overload')) {
      const database = await freshDatabase();
      try {
        const part = overloadLines(await overloadRounds(database.url));
        lines.push(...part.lines);
        failed += part.failed;
      } finally {
        await database.drop();
      }
    }
    if (PARTS.includes('storm')) {
      const runs = await stormRounds((await seeded()).url, STORM_CLIENTS);
      // A client the storm left unanswered is a figure of the storm, not a failed run.
      lines.push(...stormLines(runs, STORM_CLIENTS));
    }
    if (PARTS.includes('lock')) {
      const part = lockLines([
        { label: 'WORKERS=1', runs: await lockRuns('1') },
        { label: 'WORKERS=auto', runs: await lockRuns('auto') },
      ]);
      lines.push(...part.lines);
      failed += part.failed;
    }
    if (PARTS.includes('streams')) {
      const results = [{ label: 'SQLite', runs: await streamsRuns(freshStore('workers-streams'), 'SQLite') }];
      const database = await freshDatabase();
      try {
        results.push({ label: 'PostgreSQL', runs: await streamsRuns(database.url, 'PostgreSQL') });
      } finally {
        await database.drop();
      }
      const part = streamsLines(results);
      lines.push(...part.lines);
      failed += part.failed;
    }
    if (PARTS.includes('credits')) {
      const part = creditLines(await creditRounds());
      lines.push(...part.lines);
      failed += part.failed;
    }
  } finally {
    await stored?.drop();
  }
  return { lines, failed };
}
