// Overload: creates offered at 2x and 4x the service's capacity through 1,000 connections, against the same
// service at capacity (50 connections in a closed loop). What a client meets: the rate answered 2xx, the share
// shed with 503, the p99 of each kind, and the longest wait for a response (autocannon's latency is from the
// request's write to its end; these responses are one small write, so that is the time to the first byte, and a
// request never answered within autocannon's timeout counts under "timeouts"). BENCH_ONLY=overload runs it alone.
//
// One autocannon run per load, its first WARMUP_SECONDS unrecorded: the measured requests travel on connections
// already accepted. Node (libuv 1.46) accepts one connection per event-loop turn, and a turn reads every readable
// connection first, so 1,000 new connections under load wait seconds in the kernel's accept queue; a second run
// after the warm-up would measure that storm again (and autocannon charges a request written on a connection the
// server closed to the next answer on its new one). The storm gets its own figure: how long until every one of
// the 1,000 connections had its first answer.
import os from 'node:os';
import autocannon from 'autocannon';
import { CONNECTIONS, createRequests, f0, f1, freshStore, median, ROUNDS, SECONDS, start, WARMUP_SECONDS, type SectionResult } from './lib';

const OVERLOAD_CONNECTIONS = 1000;
const TIMEOUT_S = 10;

type Outcome = {
  label: string;
  offered: number;
  seconds: number;
  answered: number[];
  shed: number[];
  other: number;
  timeouts: number;
  errors: number;
  /** From the start until every connection had its first answer: the accept-queue storm. */
  allAnsweredMs: number;
};

const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.99)] ?? 0;
};

/** One load against a fresh service, recording the status and latency of every request sent after the warm-up. */
async function offer(label: string, connections: number, overallRate?: number): Promise<Outcome> {
  const server = await start('service', freshStore(`overload-${label}`));
  try {
    return await new Promise<Outcome>((resolve, reject) => {
      const outcome: Outcome = { label, offered: overallRate ?? 0, seconds: SECONDS, answered: [], shed: [], other: 0, timeouts: 0, errors: 0, allAnsweredMs: 0 };
      const startedAt = performance.now();
      const recordFrom = startedAt + WARMUP_SECONDS * 1000;
      const firstAnswered = new Set<unknown>();
      const instance = autocannon(
        { url: `http://127.0.0.1:${server.port}`, connections, duration: WARMUP_SECONDS + SECONDS, overallRate, timeout: TIMEOUT_S, requests: createRequests() },
        (error: Error | null, result) => {
          if (error) reject(error);
          else resolve({ ...outcome, timeouts: result.timeouts, errors: result.errors - result.timeouts });
        },
      );
      instance.on('response', (client: unknown, status: number, _bytes: number, ms: number) => {
        const now = performance.now();
        if (!firstAnswered.has(client)) {
          firstAnswered.add(client);
          if (firstAnswered.size === connections) outcome.allAnsweredMs = now - startedAt;
        }
        if (now - ms < recordFrom) return;
        if (status >= 200 && status < 300) outcome.answered.push(ms);
        else if (status === 503) outcome.shed.push(ms);
        else outcome.other += 1;
      });
    });
  } finally {
    await server.stop();
  }
}

const loadNow = (): string => os.loadavg()[0]?.toFixed(1) ?? '?';

/**
 * ROUNDS alternating rounds of: capacity, 2x, 4x, capacity again (the A/A: the same load on the same build, whose
 * spread is the smallest ratio one run can claim). Each overload's p99 is compared with its own round's first
 * capacity run; the machine's 1-minute load average is given beside each run, since other work shares its cores.
 */
export async function overloadSection(): Promise<SectionResult> {
  const rounds: { capacity: Outcome; again: Outcome; overloads: Outcome[]; loads: string[] }[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const loads = [loadNow()];
    const capacity = await offer('capacity', CONNECTIONS);
    const capacityRate = capacity.answered.length / capacity.seconds;
    const overloads = [];
    for (const factor of [2, 4]) {
      loads.push(loadNow());
      overloads.push(await offer(`${factor}x`, OVERLOAD_CONNECTIONS, Math.round(capacityRate * factor)));
    }
    loads.push(loadNow());
    const again = await offer('capacity-again', CONNECTIONS);
    loads.push(loadNow());
    rounds.push({ capacity, again, overloads, loads });
  }
  const rowOf = (name: string, x: Outcome, load: string) => {
    const total = x.answered.length + x.shed.length + x.other;
    const longest = Math.max(0, ...x.answered, ...x.shed);
    return `| ${name} | ${load} | ${f0(x.answered.length / x.seconds)} | ${f1((100 * x.shed.length) / Math.max(1, total))}% | ${f0(p99(x.answered))} | ${f0(p99(x.shed))} | ${f0(longest)} | ${x.allAnsweredMs === 0 ? `never in ${WARMUP_SECONDS + SECONDS} s` : f1(x.allAnsweredMs / 1000)} | ${x.timeouts} / ${x.errors} / ${x.other} |`;
  };
  const lines = [
    `### Overload (POST /plants): offered 2x and 4x capacity through ${OVERLOAD_CONNECTIONS} connections; ${SECONDS} s recorded after ${WARMUP_SECONDS} s warm-up on the same connections; ${ROUNDS} alternating rounds`,
    '',
    '| round, load | load avg (1 min) | answered 2xx/s | shed (503) | p99 answered ms | p99 shed ms | longest wait ms | all connections answered after s | timeouts / errors / other non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  rounds.forEach((r, index) => {
    lines.push(rowOf(`${index + 1}: capacity, ${CONNECTIONS} connections, closed loop`, r.capacity, r.loads[0] ?? ''));
    r.overloads.forEach((x, k) => lines.push(rowOf(`${index + 1}: ${k === 0 ? 2 : 4}x, ${x.offered} req/s offered`, x, r.loads[k + 1] ?? '')));
    lines.push(rowOf(`${index + 1}: capacity again (A/A)`, r.again, r.loads[3] ?? ''));
  });
  for (const line of lines.slice(4)) console.error(`overload ${line}`);
  const ratio = (x: Outcome, of: Outcome) => p99(x.answered) / Math.max(1, p99(of.answered));
  const at = (k: number) => median(rounds.map((r) => ratio(r.overloads[k] as Outcome, r.capacity)));
  const aa = rounds.map((r) => ratio(r.again, r.capacity));
  const longestWait = Math.max(...rounds.flatMap((r) => r.overloads.map((x) => Math.max(0, ...x.answered, ...x.shed))));
  const timeouts = rounds.reduce((sum, r) => sum + r.overloads.reduce((n, x) => n + x.timeouts, 0), 0);
  lines.push(
    '',
    '| goal | value | goal |',
    '|---|---:|---|',
    `| p99 answered at 2x / p99 at capacity, median of rounds | ${at(0).toFixed(2)} | ≤ 3 |`,
    `| p99 answered at 4x / p99 at capacity, median of rounds | ${at(1).toFixed(2)} | ≤ 3 |`,
    `| A/A: p99 at capacity again / p99 at capacity, each round | ${aa.map((x) => x.toFixed(2)).join(', ')} | the spread one run can claim |`,
    `| longest wait for a first byte after the warm-up (ms), requests never answered in ${TIMEOUT_S} s | ${f0(longestWait)}, ${timeouts} | ≤ 2000, 0 |`,
    '',
  );
  // Shed requests are the point here; only a closed loop at capacity must be answered 2xx throughout.
  const failed = rounds.reduce((sum, r) => sum + [r.capacity, r.again].reduce((n, x) => n + x.shed.length + x.other + x.timeouts + x.errors, 0), 0);
  return { lines, failed };
}
