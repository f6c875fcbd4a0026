// Overload: creates offered at 2x and 4x the service's capacity through 1,000 connections, against the same
// service at capacity (50 connections in a closed loop). What a client meets: the rate answered 2xx, the share
// shed with 503, the p99 of each kind, and the longest wait for a response (autocannon's latency is from the
// request's write to its end; these responses are one small write, so that is the time to the first byte, and a
// request never answered within autocannon's timeout counts under "timeouts"). BENCH_ONLY=overload runs it alone.
import autocannon from 'autocannon';
import { CONNECTIONS, createRequests, f0, f1, freshStore, SECONDS, start, WARMUP_SECONDS, type SectionResult } from './lib';

const OVERLOAD_CONNECTIONS = 1000;
const TIMEOUT_S = 10;

type Outcome = { label: string; offered: number; seconds: number; answered: number[]; shed: number[]; other: number; timeouts: number; errors: number };

const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.99)] ?? 0;
};

/** One load against a fresh service, recording every response's status and latency. */
async function offer(label: string, connections: number, overallRate?: number): Promise<Outcome> {
  const server = await start('service', freshStore(`overload-${label}`));
  try {
    const run = (seconds: number, record: boolean) =>
      new Promise<Outcome>((resolve, reject) => {
        const outcome: Outcome = { label, offered: overallRate ?? 0, seconds, answered: [], shed: [], other: 0, timeouts: 0, errors: 0 };
        const instance = autocannon(
          { url: `http://127.0.0.1:${server.port}`, connections, duration: seconds, overallRate, timeout: TIMEOUT_S, requests: createRequests() },
          (error: Error | null, result) => {
            if (error) reject(error);
            else resolve({ ...outcome, timeouts: result.timeouts, errors: result.errors - result.timeouts });
          },
        );
        if (!record) return;
        instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
          if (status >= 200 && status < 300) outcome.answered.push(ms);
          else if (status === 503) outcome.shed.push(ms);
          else outcome.other += 1;
        });
      });
    await run(WARMUP_SECONDS, false);
    return await run(SECONDS, true);
  } finally {
    await server.stop();
  }
}

export async function overloadSection(): Promise<SectionResult> {
  const capacity = await offer('capacity', CONNECTIONS);
  const capacityRate = capacity.answered.length / capacity.seconds;
  const capacityP99 = p99(capacity.answered);
  const overloads = [];
  for (const factor of [2, 4]) overloads.push(await offer(`${factor}x`, OVERLOAD_CONNECTIONS, Math.round(capacityRate * factor)));
  const rowOf = (name: string, x: Outcome) => {
    const total = x.answered.length + x.shed.length + x.other;
    const longest = Math.max(0, ...x.answered, ...x.shed);
    return `| ${name} | ${f0(x.answered.length / x.seconds)} | ${f1((100 * x.shed.length) / Math.max(1, total))}% | ${f0(p99(x.answered))} | ${f0(p99(x.shed))} | ${f0(longest)} | ${x.timeouts} / ${x.errors} / ${x.other} |`;
  };
  for (const x of [capacity, ...overloads]) console.error(`overload ${rowOf(x.label, x)}`);
  const worst = Math.max(...overloads.map((x) => p99(x.answered)));
  const longestWait = Math.max(...overloads.map((x) => Math.max(0, ...x.answered, ...x.shed)));
  const timeouts = overloads.reduce((sum, x) => sum + x.timeouts, 0);
  const lines = [
    `### Overload (POST /plants): offered 2x and 4x capacity through ${OVERLOAD_CONNECTIONS} connections; ${SECONDS} s after ${WARMUP_SECONDS} s warm-up, one run each`,
    '',
    '| load | answered 2xx/s | shed (503) | p99 answered ms | p99 shed ms | longest wait ms | timeouts / errors / other non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|',
    rowOf(`capacity: ${CONNECTIONS} connections, closed loop`, capacity),
    ...overloads.map((x, index) => rowOf(`${index === 0 ? 2 : 4}x: ${x.offered} req/s offered`, x)),
    '',
    '| goal | value | goal |',
    '|---|---:|---|',
    `| p99 of answered requests / p99 at capacity | ${(worst / Math.max(1, capacityP99)).toFixed(2)} | ≤ 3 |`,
    `| longest wait for a first byte (ms), requests never answered in ${TIMEOUT_S} s | ${f0(longestWait)}, ${timeouts} | ≤ 2000, 0 |`,
    '',
  ];
  // Shed requests are the point here; only a closed loop at capacity must be answered 2xx throughout.
  return { lines, failed: capacity.shed.length + capacity.other + capacity.timeouts + capacity.errors };
}
