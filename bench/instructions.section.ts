// Instructions per request (BENCH_ONLY=instructions): the server counted under valgrind's callgrind, the method
// that resolves a few percent on this VM where throughput rounds spread by a tenth. Two parts, chosen with
// BENCH_INSTRUCTIONS_PARTS=loads,ratios (both by default).
// - loads: for the loads of the create, read and feed sections it counts the current build, a baseline checkout
//   (BENCH_BASELINE, run on the same node as the current build, so the ratio compares the code alone) and the
//   current build again (the A/A). The three targets of a load run at once on both cores, so they meet the same
//   conditions: a create's count depends on how many creates share its commit, which moves with how fast requests
//   arrive. Without BENCH_BASELINE it counts the A/A alone.
// - ratios: the CPU ratio goals, the service against F+log and the read floor (bench/instructions.ratios.ts).
// Only the servers run under valgrind; the requests come from autocannon in this process.
import { spawnSync } from 'node:child_process';
import { storeOfPlants } from './create.section';
import { patchRequests, SEEDED } from './feed.section';
import { countAtOnce, countInstructions, COUNTED_REQUESTS, f3, KEEP_ALIVE_CONNECTIONS, thousands, WARMUP_REQUESTS, type Workload } from './instructions.count';
import { ratioRows } from './instructions.ratios';
import { baselineRuntime, CURRENT, createRequests, type Runtime, type SectionResult } from './lib';
import { byIdRequests, pageRequests } from './read.section';

/** Baseline / current: the current build may spend at most about 3% more instructions per request. */
const GOAL = 0.97;

const PARTS = new Set((process.env.BENCH_INSTRUCTIONS_PARTS ?? 'loads,ratios').split(',').map((part) => part.trim()));

// The sections that count their own loads import these from here, as they did before the counting had its own file.
export { countInstructions, type Workload };

function header(baseline: Runtime | undefined): string[] {
  const against = baseline === undefined ? 'no baseline (BENCH_BASELINE names a built checkout)' : `baseline ${baseline.root}`;
  return [
    `## Instructions per request: this checkout against ${against}, both on ${CURRENT.label}`,
    '',
    `Each target under \`valgrind --tool=callgrind\`, the three of a load at once on cores 0 and 1: ${WARMUP_REQUESTS.toLocaleString('en')} requests`,
    `from ${KEEP_ALIVE_CONNECTIONS} keep-alive connections to warm up, counters zeroed, ${COUNTED_REQUESTS.toLocaleString('en')} counted. Goal: baseline / current at`,
    `least ${GOAL} on every load (the current build at most about 3% more instructions); the A/A (the same build`,
    'counted twice) is the smallest difference this run can claim.',
    '',
    '| load | baseline instr/req | current instr/req | current again instr/req | baseline / current | goal met | A/A (again / current) |',
    '|---|---:|---:|---:|---:|---|---:|',
  ];
}

async function loadRows(stored: string, seeded: string): Promise<SectionResult> {
  const baseline = baselineRuntime(CURRENT.node);
  const workloads: Workload[] = [
    { name: 'create', requests: () => createRequests() },
    { name: 'read by id', store: stored, requests: byIdRequests },
    { name: 'read a page of 100', store: stored, requests: pageRequests },
    { name: 'edit (PATCH)', store: seeded, requests: () => patchRequests },
  ];
  const targets: [string, Runtime][] = [['current', CURRENT], ['again', { ...CURRENT, label: `${CURRENT.label} again` }]];
  if (baseline !== undefined) targets.push(['baseline', baseline]);
  const lines = header(baseline);
  let failed = 0;
  for (const workload of workloads) {
    console.error(`instructions: ${workload.name}`);
    const counts = await countAtOnce(targets.map(([name, runtime]) => countInstructions(name, runtime, workload)));
    const perRequest = Object.fromEntries(targets.map(([name], index) => [name, counts[index]?.instructionsPerRequest]));
    const { current = Number.NaN, again = Number.NaN, baseline: base } = perRequest;
    const ratio = base === undefined ? undefined : base / current;
    lines.push(
      `| ${workload.name} | ${thousands(base)} | ${thousands(current)} | ${thousands(again)} | ${ratio === undefined ? 'n/a' : f3(ratio)} | ${ratio === undefined ? 'n/a' : ratio >= GOAL ? 'yes' : 'no'} | ${f3(again / current)} |`,
    );
    failed += counts.reduce((sum, count) => sum + count.failed, 0);
  }
  return { lines: [...lines, ''], failed };
}

export async function instructionsSection(): Promise<SectionResult> {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    const line = 'instructions: skipped; valgrind is not installed';
    console.error(line);
    return { lines: ['## Instructions per request', '', line, ''], failed: 0 };
  }
  const stored = await storeOfPlants();
  const parts = [
    ...(PARTS.has('loads') ? [await loadRows(stored, await storeOfPlants(SEEDED))] : []),
    ...(PARTS.has('ratios') ? [await ratioRows(stored)] : []),
  ];
  return { lines: parts.flatMap((part) => part.lines), failed: parts.reduce((sum, part) => sum + part.failed, 0) };
}
