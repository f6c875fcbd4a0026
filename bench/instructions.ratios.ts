// The CPU ratio goals, read by instruction counts (issue 36, "How the ratio goals are judged"): the service's
// instructions per request over a reference's that does the same durable work with nothing else. Creates against
// ceiling F+log (bench/ceiling-durable-server.ts, CEILING_LOG=1), reads by id against the read floor
// (bench/read-floor-server.ts). Each row counts four targets at once on both cores, so they meet the same
// conditions: the service twice and the reference twice, each the same build counted twice (the A/As). The
// ratio's spread is the lowest and highest of the four pairings (each service count over each reference count);
// a goal inside that spread is not decided by the run. Every service target runs one process (WORKERS=1).
import { countAtOnce, countInstructions, f3, thousands, type Workload } from './instructions.count';
import { createRequests, CURRENT, type SectionResult, type Target } from './lib';
import { byIdRequests } from './read.section';

/** Service / reference: the service may spend at most 10% more instructions per request than its reference. */
const GOAL = 1.1;
/** One process: the supervisor and its workers would each be a process of their own, counted apart. */
const ONE_WORKER = { WORKERS: '1' };

type Ratio = { workload: Workload; reference: Target; referenceEnv: Record<string, string>; earlier: string };

const ratios = (stored: string): Ratio[] => [
  {
    workload: { name: 'create', requests: () => createRequests() },
    reference: { script: 'ceiling-durable-server.js', label: 'ceiling F+log' },
    referenceEnv: { CEILING_LOG: '1' },
    earlier: '1.15 at 7f3fe00',
  },
  {
    workload: { name: 'read by id', store: stored, requests: byIdRequests },
    reference: { script: 'read-floor-server.js', label: 'read floor' },
    referenceEnv: {},
    earlier: '1.08 at 7f3fe00',
  },
  {
    // Like for like: the service logs every request, as F+log does for creates; the floor above logs nothing.
    workload: { name: 'read by id', store: stored, requests: byIdRequests },
    reference: { script: 'read-floor-server.js', label: 'read floor+log' },
    referenceEnv: { CEILING_LOG: '1' },
    earlier: 'first counted here',
  },
];

export type Verdict = 'met' | 'missed' | 'not decided';

/** Met when even the highest pairing is within the goal, missed when even the lowest is past it. */
export const verdictOf = (lowest: number, highest: number, goal: number = GOAL): Verdict =>
  highest <= goal ? 'met' : lowest > goal ? 'missed' : 'not decided';

function header(): string[] {
  return [
    `## CPU ratios by instructions per request: the service (WORKERS=1) against its reference, ${CURRENT.label}`,
    '',
    'Each target alone under `valgrind --tool=callgrind`, warmed up, counters zeroed, the requests counted, dumped;',
    'the four targets of a row at once on cores 0 and 1: the service twice, the reference twice (the A/As).',
    `Goal: service / reference at most ${GOAL.toFixed(2)}. Spread: the lowest and highest of the four pairings; the`,
    "verdict is 'not decided' when the goal lies within it.",
    '',
    '| load | reference | service instr/req | service again | reference instr/req | reference again | service / reference | spread (pairings) | A/A service | A/A reference | goal | verdict | earlier |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---|---|',
  ];
}

async function ratioRow({ workload, reference, referenceEnv, earlier }: Ratio): Promise<{ line: string; failed: number }> {
  const label = typeof reference === 'string' ? reference : reference.label;
  console.error(`instructions: ${workload.name}, service against ${label}`);
  const name = label.replace(/\W+/g, '-');
  const counts = await countAtOnce([
    countInstructions('service', CURRENT, workload, undefined, undefined, ONE_WORKER),
    countInstructions('service-again', CURRENT, workload, undefined, undefined, ONE_WORKER),
    countInstructions(name, CURRENT, workload, undefined, undefined, referenceEnv, reference),
    countInstructions(`${name}-again`, CURRENT, workload, undefined, undefined, referenceEnv, reference),
  ]);
  const [service, serviceAgain, ref, refAgain] = counts.map((count) => count.instructionsPerRequest) as [number, number, number, number];
  const pairings = [service / ref, service / refAgain, serviceAgain / ref, serviceAgain / refAgain];
  const [lowest, highest] = [Math.min(...pairings), Math.max(...pairings)];
  const ratio = (service + serviceAgain) / (ref + refAgain);
  const line =
    `| ${workload.name} | ${label} | ${thousands(service)} | ${thousands(serviceAgain)} | ${thousands(ref)} | ${thousands(refAgain)} | ${f3(ratio)} | ` +
    `${f3(lowest)} to ${f3(highest)} | ${f3(serviceAgain / service)} | ${f3(refAgain / ref)} | ≤ ${GOAL.toFixed(2)} | ${verdictOf(lowest, highest)} | ${earlier} |`;
  return { line, failed: counts.reduce((sum, count) => sum + count.failed, 0) };
}

/** The two ratio rows; `stored` is the store of plants the reads by id come from. */
export async function ratioRows(stored: string): Promise<SectionResult> {
  const lines = header();
  let failed = 0;
  for (const ratio of ratios(stored)) {
    const row = await ratioRow(ratio);
    lines.push(row.line);
    failed += row.failed;
  }
  return { lines: [...lines, ''], failed };
}
