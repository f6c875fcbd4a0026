// Instructions per request (BENCH_ONLY=instructions): the server counted under valgrind's callgrind, the method
// that resolves a few percent on this VM where throughput rounds spread by a tenth. For the loads of the create,
// read and feed sections it counts the current build, a baseline checkout (BENCH_BASELINE, run on the same node
// as the current build, so the ratio compares the code alone) and the current build again (the A/A). Only the
// servers run under valgrind; the requests come from autocannon in this process. The three targets of a load run
// at once on both cores, so they meet the same conditions: a create's count depends on how many creates share
// its commit, which moves with how fast requests arrive. Without BENCH_BASELINE it counts the A/A alone.
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type autocannon from 'autocannon';
import { storeOfPlants } from './create.section';
import { patchRequests, SEEDED } from './feed.section';
import { baselineRuntime, CURRENT, createRequests, freshStore, load, start, work, type Runtime, type SectionResult } from './lib';
import { byIdRequests, pageRequests } from './read.section';

const WARMUP_REQUESTS = 1_000;
const COUNTED_REQUESTS = 2_000;
const KEEP_ALIVE_CONNECTIONS = 20;
/** Baseline / current: the current build may spend at most about 3% more instructions per request. */
const GOAL = 0.97;

// callgrind_control reaches the server through vgdb's pipes, which are named after USER (or LOGNAME) and HOST:
// the server and every control call see the same values. HOST is also the address the server listens on.
const VGDB_NAMES = { USER: 'plants-bench', LOGNAME: 'plants-bench', HOST: '127.0.0.1' };

export type Workload = { name: string; store?: string; requests: () => autocannon.Request[] };
type Count = { instructionsPerRequest: number; failed: number };

const underCallgrind = (runtime: Runtime, outFile: string): Runtime => ({
  ...runtime,
  wrapper: ['valgrind', '--quiet', '--tool=callgrind', `--callgrind-out-file=${outFile}`],
  cpus: '0,1',
  // Five minutes unless the caller allows more: on a loaded machine a start under valgrind can take longer.
  readyWithinMs: Math.max(runtime.readyWithinMs ?? 0, 300_000),
});

async function callgrindControl(option: '--zero' | '--dump', pid: number): Promise<void> {
  const { stdout } = await promisify(execFile)('callgrind_control', [option, String(pid)], { env: { PATH: process.env.PATH, ...VGDB_NAMES } });
  if (!stdout.includes('OK.')) throw new Error(`callgrind_control ${option} ${pid} answered: ${stdout}`);
}

/** PROGRAM TOTALS as callgrind_annotate reads them: the dump's summary line. */
function instructionsOf(dumpFile: string): number {
  const summary = /^summary: (\d+)$/m.exec(readFileSync(dumpFile, 'utf8'));
  if (summary === null) throw new Error(`${dumpFile} has no summary line`);
  return Number(summary[1]);
}

const thousands = (n: number | undefined): string => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en'));

const notAnswered = (result: autocannon.Result): number => result.non2xx + result.errors + result.timeouts;

/**
 * One target on one load: started under callgrind on its own copy of the load's store, warmed up with
 * WARMUP_REQUESTS, counters zeroed, COUNTED_REQUESTS sent, counters dumped, stopped. `env` adds to the server's
 * environment (bench/tenants.section.ts turns tenants on with it).
 */
export async function countInstructions(
  name: string,
  runtime: Runtime,
  workload: Workload,
  warmup = WARMUP_REQUESTS,
  counted = COUNTED_REQUESTS,
  env: Record<string, string> = {},
): Promise<Count> {
  const outFile = path.join(work, `callgrind-${name}-${workload.name.replace(/\W+/g, '-')}.out`);
  const server = await start('service', freshStore(`instructions-${name}`, workload.store), { ...env, ...VGDB_NAMES }, underCallgrind(runtime, outFile));
  const pid = server.child.pid ?? 0;
  try {
    // A server under valgrind runs about 50 times slower: on a busy machine a create can outlast the usual 10 s.
    const options = { connections: KEEP_ALIVE_CONNECTIONS, requests: workload.requests(), timeoutSeconds: 120 };
    const warm = await load(server.port, 0, { ...options, amount: warmup });
    await callgrindControl('--zero', pid);
    const answered = await load(server.port, 0, { ...options, amount: counted });
    await callgrindControl('--dump', pid);
    // The first dump asked for goes to the out file's name with .1 after it; the final one at exit to the name itself.
    const instructionsPerRequest = instructionsOf(`${outFile}.1`) / answered.requests.total;
    console.error(`instructions: ${workload.name}, ${name}: ${thousands(instructionsPerRequest)} per request`);
    return { instructionsPerRequest, failed: notAnswered(warm) + notAnswered(answered) };
  } finally {
    await server.stop();
  }
}

// Three decimals: the goal and the A/A differ in the second.
const f3 = (n: number): string => n.toFixed(3);

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

export async function instructionsSection(): Promise<SectionResult> {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    const line = 'instructions: skipped; valgrind is not installed';
    console.error(line);
    return { lines: ['## Instructions per request', '', line, ''], failed: 0 };
  }
  const baseline = baselineRuntime(CURRENT.node);
  const stored = await storeOfPlants();
  const seeded = await storeOfPlants(SEEDED);
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
    // Every target stops before a failure of one surfaces: no server is left running under valgrind.
    const settled = await Promise.allSettled(targets.map(([name, runtime]) => countInstructions(name, runtime, workload)));
    const counts = settled.map((result) => {
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    });
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
