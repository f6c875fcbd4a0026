// The runtime (BENCH_ONLY=runtime, with BENCH_BASELINE): the service on the Node that runs the bench (the pinned
// Node 24) against a baseline checkout on its own node (the last commit on Node 20), in the same alternating
// rounds, for the loads of the create, read and feed sections: creates, reads by id and by page on a store of
// STORED plants, and edits (PATCH) on SEEDED. Then each of `npm start`'s node flags left out on Node 24, to see
// whether it still pays there.
import type autocannon from 'autocannon';
import { storeOfPlants } from './create.section';
import { patchRequests, SEEDED } from './feed.section';
import {
  alternate,
  baselineRuntime,
  CURRENT,
  createRequests,
  f2,
  failures,
  freshStore,
  measure,
  median,
  row,
  ROUNDS,
  SECONDS,
  TABLE_HEAD,
  throughputRatio,
  type Figures,
  type Runtime,
  type SectionResult,
} from './lib';
import { byIdRequests, pageRequests } from './read.section';

const GOAL = 0.95;

const without = (flag: string): Runtime => ({
  ...CURRENT,
  label: `${CURRENT.label} without ${flag}`,
  flags: CURRENT.flags.filter((candidate) => !candidate.startsWith(flag)),
});

const cpuRatio = (runs: Figures[], against: Figures[]): number =>
  median(against.map((run) => run.cpuPerRequestUs)) / median(runs.map((run) => run.cpuPerRequestUs));

export async function runtimeSection(): Promise<SectionResult> {
  const baseline = baselineRuntime();
  if (baseline === undefined) {
    const line = 'runtime: skipped; BENCH_BASELINE names a built checkout of the last Node 20 commit (docs/performance/runtime.md)';
    console.error(line);
    return { lines: [`## Runtime`, '', line, ''], failed: 0 };
  }
  const stored = await storeOfPlants();
  const seeded = await storeOfPlants(SEEDED);
  const runtimes: Record<string, Runtime> = {
    current: CURRENT,
    // The same build again: its ratio to current is the A/A, the smallest difference this run can claim.
    again: { ...CURRENT, label: `${CURRENT.label} again` },
    baseline,
    semiSpace: without('--max-semi-space-size'),
    pretenuring: without('--no-allocation-site-pretenuring'),
  };
  const loads: { name: string; store?: string; requests: () => autocannon.Request[] }[] = [
    { name: 'create', requests: () => createRequests() },
    { name: 'read by id', store: stored, requests: byIdRequests },
    { name: 'read a page of 100', store: stored, requests: pageRequests },
    { name: 'edit (PATCH)', store: seeded, requests: () => patchRequests },
  ];
  const lines = [
    `## Runtime: ${CURRENT.label} against ${baseline.label} (${baseline.root}), ${ROUNDS} alternating rounds of ${SECONDS} s`,
    '',
    `Goal: each load's throughput and CPU per request on ${CURRENT.label} at least ${GOAL} of ${baseline.label}'s. A flag left out`,
    'is worth keeping where its row is below 1.',
    '',
    `| load | ${CURRENT.label} / ${baseline.label}, req/s | CPU (inverse) | goal met | A/A (again / current) | without --max-semi-space-size / with | without --no-allocation-site-pretenuring / with |`,
    '|---|---|---:|---|---|---|---|',
  ];
  const tables: string[] = [];
  let failed = 0;
  for (const load of loads) {
    console.error(`runtime: ${load.name}`);
    const { medians, runs } = await alternate(
      Object.fromEntries(
        Object.entries(runtimes).map(([name, runtime]) => [
          name,
          () => measure('service', freshStore(`runtime-${name}`, load.store), { requests: load.requests(), runtime }),
        ]),
      ) as Record<keyof typeof runtimes, () => Promise<Figures>>,
    );
    const [current, again, base, semi, pret] = [runs.current ?? [], runs.again ?? [], runs.baseline ?? [], runs.semiSpace ?? [], runs.pretenuring ?? []];
    const rps = median(current.map((run) => run.rps)) / median(base.map((run) => run.rps));
    const cpu = cpuRatio(current, base);
    lines.push(
      `| ${load.name} | ${throughputRatio(current, base)} | ${f2(cpu)} | ${rps >= GOAL && cpu >= GOAL ? 'yes' : 'no'} | ${throughputRatio(again, current)} | ${throughputRatio(semi, current)} | ${throughputRatio(pret, current)} |`,
    );
    tables.push(`${load.name}:`, '', ...TABLE_HEAD, ...Object.entries(runtimes).map(([name, runtime]) => row(runtime.label, medians[name] as Figures)), '');
    failed += failures(...Object.values(medians));
  }
  return { lines: [...lines, '', ...tables], failed };
}
