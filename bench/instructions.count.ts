// Counting one server's instructions per request under valgrind's callgrind: the method every CPU ratio of the
// bench is read by (docs/performance/how-it-is-measured.md#instruction-counts). The instructions section, its
// ratio rows and the sections that count their own loads (find, tenants, writes) all count through here.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type autocannon from 'autocannon';
import { freshStore, labelOf, load, start, work, type Runtime, type Target } from './lib';

export const WARMUP_REQUESTS = 1_000;
export const COUNTED_REQUESTS = 2_000;
export const KEEP_ALIVE_CONNECTIONS = 20;

// callgrind_control reaches the server through vgdb's pipes, which are named after USER (or LOGNAME) and HOST:
// the server and every control call see the same values. HOST is also the address the server listens on.
const VGDB_NAMES = { USER: 'plants-bench', LOGNAME: 'plants-bench', HOST: '127.0.0.1' };

export type Workload = {
  name: string;
  store?: string;
  requests: () => autocannon.Request[];
  /** What the load runs beside (idle streams, say): opened after the start, before the warm-up; closed before the stop. */
  beside?: (port: number) => Promise<() => void>;
  /** Keep-alive connections of the load (KEEP_ALIVE_CONNECTIONS unless set): 1 puts each create in a commit of its own. */
  connections?: number;
};
export type Count = { instructionsPerRequest: number; failed: number };

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

export const thousands = (n: number | undefined): string => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en'));

const notAnswered = (result: autocannon.Result): number => result.non2xx + result.errors + result.timeouts;

/**
 * One target on one load: started under callgrind on its own copy of the load's store, warmed up with
 * WARMUP_REQUESTS, counters zeroed, COUNTED_REQUESTS sent, counters dumped, stopped. `env` adds to the server's
 * environment (bench/tenants.section.ts turns tenants on with it); `target` is the service unless a ceiling or
 * floor is counted the same way (bench/instructions.ratios.ts).
 */
export async function countInstructions(
  name: string,
  runtime: Runtime,
  workload: Workload,
  warmup = WARMUP_REQUESTS,
  counted = COUNTED_REQUESTS,
  env: Record<string, string> = {},
  target: Target = 'service',
): Promise<Count> {
  const outFile = path.join(work, `callgrind-${name}-${workload.name.replace(/\W+/g, '-')}.out`);
  const server = await start(target, freshStore(`instructions-${name}`, workload.store), { ...env, ...VGDB_NAMES }, underCallgrind(runtime, outFile));
  const pid = server.child.pid ?? 0;
  let closeBeside = () => {};
  try {
    if (workload.beside !== undefined) closeBeside = await workload.beside(server.port);
    // A server under valgrind runs about 50 times slower: on a busy machine a create can outlast the usual 10 s.
    const options = { connections: workload.connections ?? KEEP_ALIVE_CONNECTIONS, requests: workload.requests(), timeoutSeconds: 120 };
    const warm = await load(server.port, 0, { ...options, amount: warmup });
    await callgrindControl('--zero', pid);
    const answered = await load(server.port, 0, { ...options, amount: counted });
    await callgrindControl('--dump', pid);
    // The first dump asked for goes to the out file's name with .1 after it; the final one at exit to the name itself.
    const instructionsPerRequest = instructionsOf(`${outFile}.1`) / answered.requests.total;
    const failed = notAnswered(warm) + notAnswered(answered);
    // Which target failed, and how: a timeout under valgrind is not a wrong answer.
    const faults = failed === 0 ? '' : `; not 2xx: ${answered.non2xx} counted, ${answered.errors} errors, ${answered.timeouts} timeouts (${notAnswered(warm)} in the warm-up)`;
    console.error(`instructions: ${workload.name}, ${name} (${labelOf(target)}): ${thousands(instructionsPerRequest)} per request${faults}`);
    return { instructionsPerRequest, failed };
  } finally {
    closeBeside();
    await server.stop();
  }
}

// Three decimals: the goal and the A/A differ in the second.
export const f3 = (n: number): string => n.toFixed(3);

/** Counts that run at once; every one ends (no server left under valgrind) before a failure of one surfaces. */
export async function countAtOnce(counts: Promise<Count>[]): Promise<Count[]> {
  const settled = await Promise.allSettled(counts);
  return settled.map((result) => {
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  });
}
