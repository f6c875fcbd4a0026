// Row 1 of the workers section: reads by id, first list pages and creates on PostgreSQL, WORKERS=auto (2 on this
// machine) against WORKERS=1, and auto again (the A/A), in alternating rounds. Each run starts the service afresh
// on the load's one database, warms it with the same load, then measures: throughput, latency, and CPU per request
// of the service (supervisor and workers), of wrk, and of the PostgreSQL backends serving the database.
import { backendTicks } from './postgres.section';
import { CONNECTIONS, f0, f1, f2, median, ROUNDS, SECONDS, TICKS_PER_SECOND, WARMUP_SECONDS } from './lib';
import { machineBusySeconds, runWrk, serviceCpuSeconds, startService, type WrkLoad } from './workers.wrk';

export type Side = 'auto' | 'one' | 'autoAgain';
export const SIDES: Side[] = ['auto', 'one', 'autoAgain'];
const WORKERS_OF: Record<Side, string> = { auto: 'auto', one: '1', autoAgain: 'auto' };

export type LoadRun = {
  workers: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serviceCpuUs: number;
  wrkCpuUs: number;
  pgCpuUs: number;
  /** Cores busy with anything else during the measured load (other helpers' work, the kernel's own threads). */
  otherCores: number;
  /** Answers other than 2xx, and connection errors or timeouts: none is expected. */
  failed: number;
};

async function measureOnce(load: WrkLoad, url: string, stored: number, side: Side): Promise<LoadRun> {
  const server = await startService(url, WORKERS_OF[side]);
  try {
    await runWrk({ port: server.port, load, seconds: WARMUP_SECONDS, connections: CONNECTIONS, stored });
    const cpuBefore = serviceCpuSeconds(server);
    const pgBefore = await backendTicks(url);
    const busyBefore = machineBusySeconds();
    const result = await runWrk({ port: server.port, load, seconds: SECONDS, connections: CONNECTIONS, stored });
    const busy = machineBusySeconds() - busyBefore;
    const serviceCpu = serviceCpuSeconds(server) - cpuBefore;
    const pgCpu = ((await backendTicks(url)) - pgBefore) / TICKS_PER_SECOND;
    const perRequestUs = (seconds: number) => (result.requests === 0 ? 0 : (seconds * 1e6) / result.requests);
    return {
      workers: server.workers,
      rps: result.requests / result.seconds,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      serviceCpuUs: perRequestUs(serviceCpu),
      wrkCpuUs: perRequestUs(result.wrkCpuSeconds),
      pgCpuUs: perRequestUs(pgCpu),
      otherCores: Math.max(0, busy - serviceCpu - result.wrkCpuSeconds - pgCpu) / result.seconds,
      failed: result.shed + result.other + result.errors,
    };
  } finally {
    await server.stop();
  }
}

/** ROUNDS rounds of the three sides, each round in the reverse order of the one before. */
export async function alternateSides(load: WrkLoad, url: string, stored: number): Promise<Record<Side, LoadRun[]>> {
  const runs: Record<Side, LoadRun[]> = { auto: [], one: [], autoAgain: [] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const side of round % 2 === 1 ? SIDES : [...SIDES].reverse()) {
      const run = await measureOnce(load, url, stored, side);
      runs[side].push(run);
      console.error(
        `workers ${load} round ${round} ${side} (${run.workers} processes): ${f0(run.rps)} req/s, p99 ${f1(run.p99Ms)} ms, ` +
          `service ${f0(run.serviceCpuUs)} µs/req, wrk ${f0(run.wrkCpuUs)} µs/req, PostgreSQL ${f0(run.pgCpuUs)} µs/req, others ${f2(run.otherCores)} cores, failed ${run.failed}`,
      );
    }
  }
  return runs;
}

const med = (runs: LoadRun[], key: keyof LoadRun) => median(runs.map((run) => run[key]));

export const sideRow = (label: string, runs: LoadRun[]): string =>
  `| ${label} | ${[...new Set(runs.map((run) => run.workers))].join('/')} | ${f0(med(runs, 'rps'))} | ${f1(med(runs, 'p50Ms'))} | ${f1(med(runs, 'p99Ms'))} | ` +
  `${f0(med(runs, 'serviceCpuUs'))} | ${f0(med(runs, 'wrkCpuUs'))} | ${f0(med(runs, 'pgCpuUs'))} | ${f2(med(runs, 'otherCores'))} |`;

export const SIDE_HEAD = [
  '| load, side | processes serving | req/s | p50 ms | p99 ms | service CPU µs/req | wrk CPU µs/req | PostgreSQL CPU µs/req | other work, cores |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
];

/** A ratio of medians of `key`, with each round's own ratio: the spread one run shows. */
export function ratioOf(runs: LoadRun[], against: LoadRun[], key: 'rps' | 'serviceCpuUs'): { value: number; text: string } {
  const value = med(runs, key) / med(against, key);
  const rounds = runs.map((run, index) => f2(run[key] / (against[index]?.[key] ?? Number.NaN)));
  return { value, text: `${f2(value)} (rounds ${rounds.join(', ')})` };
}

/**
 * The verdict on a ratio goal beside its A/A: met or missed only when the value's distance from the threshold
 * (relative) exceeds the A/A's distance from 1 (its ratio of medians, as the goal's value is one), otherwise not
 * decided. The rounds are printed beside both, for the reader who wants the wider spread.
 */
export function verdict(value: number, aa: LoadRun[], aaAgainst: LoadRun[], key: 'rps' | 'serviceCpuUs', holds: (x: number) => boolean, threshold: number): string {
  const spread = Math.abs(med(aa, key) / med(aaAgainst, key) - 1);
  const margin = Math.abs(value - threshold) / threshold;
  if (margin <= spread) return `not decided (within the A/A's ${f0(spread * 100)}%)`;
  return holds(value) ? 'met' : 'missed';
}

/**
 * The most WORKERS=auto could give over WORKERS=1 here if each request kept WORKERS=1's CPU (service, wrk and
 * PostgreSQL together) and nothing else ran: two cores over what one worker's throughput already uses.
 */
export function machineBound(one: LoadRun[]): number {
  const perRequestUs = med(one, 'serviceCpuUs') + med(one, 'wrkCpuUs') + med(one, 'pgCpuUs');
  return 2e6 / perRequestUs / med(one, 'rps');
}

/** Cores busy while WORKERS=1 ran: its service, wrk and PostgreSQL per request times its rate, plus other work. */
export function busyAtOne(one: LoadRun[]): number {
  const perRequestUs = med(one, 'serviceCpuUs') + med(one, 'wrkCpuUs') + med(one, 'pgCpuUs');
  return (perRequestUs * med(one, 'rps')) / 1e6 + med(one, 'otherCores');
}
