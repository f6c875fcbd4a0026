// The report's pieces shared by the bench's sections: medians of rounds, number formats, table rows, and what a
// section returns. Re-exported by bench/lib.ts.
/** One load run's figures, as the client and the server's own log saw them. */
export type Figures = {
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequestUs: number;
  peakRssMiB: number;
  non2xx: number;
  errors: number;
  total: number;
  shed: number;
  // From the server's own request log (the service only): requests it saw aborted, and 5xx other than 503.
  serverAborted: number;
  serverFaults: number;
  serverP99: number;
};

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

export function medianFigures(runs: Figures[]): Figures {
  const keys = Object.keys(runs[0] ?? {}) as (keyof Figures)[];
  return Object.fromEntries(keys.map((key) => [key, median(runs.map((run) => run[key]))])) as Figures;
}

export const f0 = (n: number): string => n.toFixed(0);
export const f1 = (n: number): string => n.toFixed(1);
export const f2 = (n: number): string => n.toFixed(2);
export const met = (holds: boolean): string => (holds ? 'yes' : 'no');

/**
 * The throughput ratio of two targets measured in the same alternating rounds: the ratio of their medians (the
 * figure a goal is judged on), followed by each round's own ratio. On this VM the rounds of one run spread by
 * about a tenth; printed beside the goal, that spread says how much one run can tell.
 */
export const throughputRatio = (runs: Figures[], against: Figures[]): string => {
  const ratio = median(runs.map((run) => run.rps)) / median(against.map((run) => run.rps));
  return `${f2(ratio)} (rounds ${runs.map((run, index) => f2(run.rps / (against[index]?.rps ?? Number.NaN))).join(', ')})`;
};

export const TABLE_HEAD = ['| target | req/s | p50 ms | p99 ms | server CPU µs/req | peak RSS MiB |', '|---|---:|---:|---:|---:|---:|'];
export const row = (name: string, x: Figures): string =>
  `| ${name} | ${f0(x.rps)} | ${f1(x.p50)} | ${f1(x.p99)} | ${f0(x.cpuPerRequestUs)} | ${f1(x.peakRssMiB)} |`;

/** What every section returns: report lines, and how many of the service's requests were not 2xx where all must be. */
export type SectionResult = { lines: string[]; failed: number };
export const failures = (...runs: Figures[]): number => runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0);
