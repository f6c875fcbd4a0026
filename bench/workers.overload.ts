// Row 2 of the workers section: overload on accepted keep-alive connections with WORKERS=auto: creates from
// a closed loop of 64 connections (the capacity, which must never be shed), then about 2x and 4x that rate from
// PACED_CONNECTIONS paced connections, then the closed loop again (the A/A), on one service per round.
//
// wrk has no fixed-rate mode: bench/workers.wrk.lua hands out send times at the target rate, and a connection free
// to send takes the next one. When answers slow down so that every connection is busy, the rate offered falls to
// connections / latency: the rate achieved is reported, and a goal is not decided when it stayed under 1.8x or
// 3.6x. The first send time is HOLD_MS after the start: the service accepts the connections while idle, so the load
// meets accepted connections only. PACED_CONNECTIONS (BENCH_WORKERS_PACED_CONNECTIONS, default 1,800) stays under
// the default MAX_CONNECTIONS of 1,000 per worker times 2 workers; above that the runs set MAX_CONNECTIONS to it.
// wrk's latency runs from a request's write to its whole answer; these answers are one small write, so it is the
// time to the first byte. Every run is timed (WRK_TIMED): each answer's latency by its status, 2xx and 503 apart.
// With BENCH_BASELINE (another checkout, built; run by the bench's own node unless BENCH_BASELINE_NODE says
// otherwise) each round runs both builds, in alternating order (this build first in odd rounds), each on a
// service of its own; the goal rows judge this build, the baseline's table stands beside them.
import { baselineRuntime, CURRENT, f0, f1, f2, median, ROUNDS, SECONDS, WARMUP_SECONDS, type Runtime } from './lib';
import { runWrk, startService, type WrkResult } from './workers.wrk';

export const CLOSED_LOOP = 64;
export const PACED_CONNECTIONS = Number(process.env.BENCH_WORKERS_PACED_CONNECTIONS ?? 1800);
const HOLD_MS = 2000;
const SERVICE_ENV: Record<string, string> = PACED_CONNECTIONS > 1800 ? { MAX_CONNECTIONS: String(PACED_CONNECTIONS) } : {};
const FACTORS = [2, 4] as const;

type Paced = WrkResult & { factor: number; target: number; achieved: number };
export type OverloadRound = { workers: number; capacity: WrkResult; again: WrkResult; paced: Paced[] };
export type OverloadSide = { label: string; rounds: OverloadRound[] };

const rate = (x: WrkResult) => x.ok / x.seconds;

/** A paced run: its answers (2xx, 503, other) per second of the time after the first send time. */
async function paced(port: number, factor: number, capacity: number): Promise<Paced> {
  const target = capacity * factor;
  const seconds = SECONDS + HOLD_MS / 1000;
  const result = await runWrk({ port, load: 'creates', seconds, connections: PACED_CONNECTIONS, rate: target, holdMs: HOLD_MS, timed: true });
  const loaded = result.seconds - HOLD_MS / 1000;
  return { ...result, factor, target, achieved: (result.ok + result.shed + result.other) / loaded };
}

async function overloadRound(url: string, runtime: Runtime, label: string, round: number): Promise<OverloadRound> {
  const server = await startService(url, 'auto', SERVICE_ENV, runtime);
  try {
    const closed = (seconds: number) => runWrk({ port: server.port, load: 'creates', seconds, connections: CLOSED_LOOP, timed: true });
    await closed(WARMUP_SECONDS);
    const capacity = await closed(SECONDS);
    const runs: Paced[] = [];
    for (const factor of FACTORS) runs.push(await paced(server.port, factor, rate(capacity)));
    const again = await closed(SECONDS);
    console.error(
      `workers overload round ${round}, ${label} (${server.workers} processes): capacity ${f0(rate(capacity))}/s p99 ${f1(capacity.okP99Ms)} ms; ` +
        runs.map((x) => `${x.factor}x achieved ${f2(x.achieved / rate(capacity))}x, 503 ${x.shed}, 2xx p99 ${f1(x.okP99Ms)} ms, longest ${f0(x.okMaxMs)} ms`).join('; ') +
        `; again ${f0(rate(again))}/s p99 ${f1(again.okP99Ms)} ms`,
    );
    return { workers: server.workers, capacity, again, paced: runs };
  } finally {
    await server.stop();
  }
}

/** This build's rounds first in the result, then the baseline's when BENCH_BASELINE names one. */
export async function overloadRounds(url: string): Promise<OverloadSide[]> {
  const baseline = baselineRuntime(process.env.BENCH_BASELINE_NODE ?? process.execPath);
  const sides = [{ label: 'this build', runtime: CURRENT, rounds: [] as OverloadRound[] }];
  if (baseline !== undefined) sides.push({ label: `baseline ${baseline.root}`, runtime: baseline, rounds: [] });
  for (let round = 1; round <= ROUNDS; round += 1) {
    const order = round % 2 === 1 ? sides : [...sides].reverse();
    for (const side of order) side.rounds.push(await overloadRound(url, side.runtime, side.label, round));
  }
  return sides.map(({ label, rounds }) => ({ label, rounds }));
}

const ms = (value: number) => (value < 0 ? '–' : f1(value));

function loadRow(label: string, x: WrkResult, workers: number, target: string, achieved: string): string {
  const answered = x.ok + x.shed + x.other;
  return (
    `| ${label} | ${workers} | ${target} | ${achieved} | ${f0(rate(x))} | ${x.shed} (${f1((100 * x.shed) / Math.max(1, answered))}%) | ${ms(x.okP99Ms)} | ${ms(x.okMaxMs)} | ` +
    `${ms(x.shedP99Ms)} | ${ms(x.shedMaxMs)} | ${x.timeouts} / ${x.errors - x.timeouts} / ${x.other} | ${f0((x.wrkCpuSeconds * 1e6) / Math.max(1, x.requests))} |`
  );
}

function verdictAt(factor: number, runs: { x: Paced; capacity: WrkResult }[], aaSpread: number): { value: number; ratios: number[]; verdict: string } {
  const ratios = runs.map(({ x, capacity }) => x.okP99Ms / capacity.okP99Ms);
  const value = median(ratios);
  const reached = runs.map(({ x, capacity }) => x.achieved / rate(capacity));
  if (reached.some((r) => r < 0.9 * factor)) return { value, ratios, verdict: `not decided: the load reached ${reached.map(f2).join(', ')}x, not ${f1(0.9 * factor)}x in every round` };
  if (Math.abs(value - 3) / 3 <= aaSpread) return { value, ratios, verdict: `not decided (within the A/A's ${f0(aaSpread * 100)}%)` };
  return { value, ratios, verdict: value <= 3 ? 'met' : 'missed' };
}

export function overloadLines(sides: OverloadSide[]): { lines: string[]; failed: number } {
  const lines: string[] = [];
  let failed = 0;
  sides.forEach((side, index) => {
    const part = sideLines(side, sides.length > 1);
    lines.push(...part.lines);
    // The closed loop of the baseline is its own figure; only this build's failures fail the run.
    if (index === 0) failed += part.failed;
  });
  return { lines, failed };
}

function sideLines({ label, rounds }: OverloadSide, named: boolean): { lines: string[]; failed: number } {
  const lines = [
    `### Overload with WORKERS=auto (creates on PostgreSQL${named ? `, ${label}` : ''}): capacity = a closed loop of ${CLOSED_LOOP} connections; about 2x and 4x its rate from ${PACED_CONNECTIONS} paced connections; ${SECONDS} s each, after ${WARMUP_SECONDS} s warm-up; ${ROUNDS} rounds`,
    '',
    '| round, load | processes | target/s | offered/s (x capacity) | 2xx/s | shed (503) | p99 2xx ms | longest 2xx ms | p99 503 ms | longest 503 ms | timeouts / errors / other non-2xx | wrk CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  rounds.forEach((r, index) => {
    const capacity = rate(r.capacity);
    lines.push(loadRow(`${index + 1}: capacity, ${CLOSED_LOOP} connections, closed loop`, r.capacity, r.workers, 'closed loop', `${f0(capacity)} (1.00x)`));
    for (const x of r.paced) lines.push(loadRow(`${index + 1}: ${x.factor}x, ${PACED_CONNECTIONS} paced connections`, x, r.workers, f0(x.target), `${f0(x.achieved)} (${f2(x.achieved / capacity)}x)`));
    lines.push(loadRow(`${index + 1}: capacity again (A/A)`, r.again, r.workers, 'closed loop', `${f0(rate(r.again))} (${f2(rate(r.again) / capacity)}x)`));
  });
  const rows = ['', '| goal | value | goal | verdict |', '|---|---:|---|---|'];
  const aa = rounds.map((r) => r.again.okP99Ms / r.capacity.okP99Ms);
  const aaSpread = Math.max(...aa.map((x) => Math.abs(x - 1)));
  FACTORS.forEach((factor, k) => {
    const { value, ratios, verdict } = verdictAt(factor, rounds.map((r) => ({ x: r.paced[k] as Paced, capacity: r.capacity })), aaSpread);
    rows.push(`| p99 of 2xx at ${factor}x / p99 at capacity, median of rounds (rounds ${ratios.map(f2).join(', ')}) | ${f2(value)} | ≤ 3 | ${verdict} |`);
  });
  rows.push(`| A/A: p99 at capacity again / p99 at capacity, each round | ${aa.map(f2).join(', ')} | the spread one run can claim | |`);
  const paced = rounds.flatMap((r) => r.paced);
  const longestOk = Math.max(...paced.map((x) => x.okMaxMs));
  const longestShed = Math.max(...paced.map((x) => x.shedMaxMs));
  const timeouts = paced.reduce((n, x) => n + x.timeouts, 0);
  const waits = longestOk <= 2000 && longestShed <= 2000 && timeouts === 0;
  rows.push(`| longest wait for a first byte at 2x and 4x (ms): 2xx, 503; requests unanswered in 10 s | ${f0(longestOk)}, ${f0(longestShed)}; ${timeouts} | ≤ 2000, 0 | ${waits ? 'met' : 'missed'} |`);
  const closedShed = rounds.reduce((sum, r) => sum + r.capacity.shed + r.again.shed, 0);
  const closedFailed = rounds.reduce((sum, r) => sum + [r.capacity, r.again].reduce((n, x) => n + x.shed + x.other + x.errors, 0), 0);
  rows.push(`| closed loop of ${CLOSED_LOOP} connections: 503s (other failures) | ${closedShed} (${closedFailed - closedShed}) | 0 | ${closedFailed === 0 ? 'met' : 'missed'} |`);
  return { lines: [...lines, ...rows, ''], failed: closedFailed };
}
