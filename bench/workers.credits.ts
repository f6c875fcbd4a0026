// Part `credits` of BENCH_ONLY=workers: what the rate limit costs across workers without Redis, where the
// supervisor grants each worker hits in chunks (src/supervisor/rate-credits.ts). Reads by id (wrk, closed loop,
// one token, so one caller's count) on a SQLite copy of BENCH_STORED plants at WORKERS=auto, with
// RATE_LIMIT_PER_MINUTE set to its highest (1,000,000: never refused at these rates; a 429 would count as failed)
// against 0 (off), and the limit on again (the A/A), in alternating rounds, each a fresh service warmed with the
// same load. CPU per request is utime + stime of the supervisor and its workers; the supervisor's alone beside it.
// Goal (issue 36's reading of "CPU per request should not rise more than 10%"): limit on / off ≤ 1.10.
// BENCH_WORKERS_CREDITS_WORKERS=1 runs the same at one process (the limiter's in-process store, no credits): what
// the limiter itself costs, beside what the credits add.
import { storeOfPlants } from './create.section';
import { cpuTicks, f0, f1, f2, freshStore, median, ROUNDS, SECONDS, STORED, TICKS_PER_SECOND, WARMUP_SECONDS } from './lib';
import { ratioOf, verdict, type LoadRun } from './workers.throughput';
import { machineBusySeconds, runWrk, serviceCpuSeconds, startService } from './workers.wrk';

const CONNECTIONS = 50;
const WORKERS = process.env.BENCH_WORKERS_CREDITS_WORKERS ?? 'auto';
const HIGHEST_LIMIT = '1000000';
type Side = 'on' | 'off' | 'onAgain';
const SIDES: Side[] = ['on', 'off', 'onAgain'];
const LIMIT_OF: Record<Side, string> = { on: HIGHEST_LIMIT, off: '0', onAgain: HIGHEST_LIMIT };

export type CreditRun = LoadRun & { supervisorCpuUs: number };
export type CreditRuns = Record<Side, CreditRun[]>;

async function measureOnce(template: string, side: Side): Promise<CreditRun> {
  const server = await startService(freshStore(`workers-credits-${side}`, template), WORKERS, { RATE_LIMIT_PER_MINUTE: LIMIT_OF[side] });
  const supervisor = server.child.pid ?? 0;
  try {
    await runWrk({ port: server.port, load: 'reads', seconds: WARMUP_SECONDS, connections: CONNECTIONS, stored: STORED });
    const cpuBefore = serviceCpuSeconds(server);
    const supervisorBefore = cpuTicks(supervisor);
    const busyBefore = machineBusySeconds();
    const result = await runWrk({ port: server.port, load: 'reads', seconds: SECONDS, connections: CONNECTIONS, stored: STORED });
    const busy = machineBusySeconds() - busyBefore;
    const serviceCpu = serviceCpuSeconds(server) - cpuBefore;
    const supervisorCpu = (cpuTicks(supervisor) - supervisorBefore) / TICKS_PER_SECOND;
    const perRequestUs = (seconds: number) => (result.requests === 0 ? 0 : (seconds * 1e6) / result.requests);
    return {
      workers: server.workers,
      rps: result.ok / result.seconds,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      serviceCpuUs: perRequestUs(serviceCpu),
      supervisorCpuUs: perRequestUs(supervisorCpu),
      wrkCpuUs: perRequestUs(result.wrkCpuSeconds),
      pgCpuUs: 0,
      otherCores: Math.max(0, busy - serviceCpu - result.wrkCpuSeconds) / result.seconds,
      failed: result.shed + result.other + result.errors,
    };
  } finally {
    await server.stop();
  }
}

export async function creditRounds(): Promise<CreditRuns> {
  const template = await storeOfPlants(STORED);
  const runs: CreditRuns = { on: [], off: [], onAgain: [] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const side of round % 2 === 1 ? SIDES : [...SIDES].reverse()) {
      const run = await measureOnce(template, side);
      runs[side].push(run);
      console.error(
        `workers credits round ${round} ${side} (${run.workers} processes): ${f0(run.rps)} req/s, p99 ${f1(run.p99Ms)} ms, service ${f0(run.serviceCpuUs)} µs/req ` +
          `(supervisor ${f1(run.supervisorCpuUs)}), wrk ${f0(run.wrkCpuUs)} µs/req, others ${f2(run.otherCores)} cores, failed ${run.failed}`,
      );
    }
  }
  return runs;
}

const med = (runs: CreditRun[], key: keyof CreditRun) => median(runs.map((run) => run[key]));

export function creditLines(runs: CreditRuns): { lines: string[]; failed: number } {
  const row = (label: string, xs: CreditRun[]) =>
    `| ${label} | ${[...new Set(xs.map((x) => x.workers))].join('/')} | ${f0(med(xs, 'rps'))} | ${f1(med(xs, 'p50Ms'))} | ${f1(med(xs, 'p99Ms'))} | ${f0(med(xs, 'serviceCpuUs'))} | ` +
    `${WORKERS === '1' ? '– (no supervisor)' : f1(med(xs, 'supervisorCpuUs'))} | ${f0(med(xs, 'wrkCpuUs'))} | ${f2(med(xs, 'otherCores'))} |`;
  const label = `reads by id (GET /plants/{id} of ${STORED.toLocaleString('en')}, SQLite)`;
  const rps = ratioOf(runs.on, runs.off, 'rps');
  const rpsAa = ratioOf(runs.onAgain, runs.on, 'rps');
  const cpu = ratioOf(runs.on, runs.off, 'serviceCpuUs');
  const cpuAa = ratioOf(runs.onAgain, runs.on, 'serviceCpuUs');
  const lines = [
    `### Rate limit across workers without Redis (supervisor credits): ${label} at WORKERS=${WORKERS}, ${CONNECTIONS} connections (wrk, closed loop), ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`,
    '',
    '| side | processes serving | req/s | p50 ms | p99 ms | service CPU µs/req | of which the supervisor | wrk CPU µs/req | other work, cores |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row(`RATE_LIMIT_PER_MINUTE=${HIGHEST_LIMIT}`, runs.on),
    row('RATE_LIMIT_PER_MINUTE=0 (off)', runs.off),
    row(`RATE_LIMIT_PER_MINUTE=${HIGHEST_LIMIT} again (A/A)`, runs.onAgain),
    '',
    '| goal | value (rounds) | A/A (rounds) | goal | verdict |',
    '|---|---:|---:|---|---|',
    `| service CPU per request, limit on / off | ${cpu.text} | ${cpuAa.text} | ≤ 1.10 | ${verdict(cpu.value, runs.onAgain, runs.on, 'serviceCpuUs', (x) => x <= 1.1, 1.1)} |`,
    `| throughput, limit on / off | ${rps.text} | ${rpsAa.text} | reported | |`,
    '',
  ];
  const failed = SIDES.reduce((n, side) => n + runs[side].reduce((m, run) => m + run.failed, 0), 0);
  return { lines, failed };
}
