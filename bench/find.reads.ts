// The read loads of the find section: interleaved in one server process (the store is read only, so every load
// meets the same warm cache), each round in the reverse order of the last, the unfiltered first page twice for
// the A/A; and latency at one connection. What the build offers (q, sort, cursor, count) is probed first: a
// build without them would answer the unfiltered page to every query and be measured as if it searched.
import type autocannon from 'autocannon';
import { cpuTicks, f0, f1, load, median, ROUNDS, TICKS_PER_SECOND, TOKEN, type Started } from './lib';
import { GENERA, SPECIES } from './find.seed';

export const FIND_SECONDS = Number(process.env.BENCH_FIND_SECONDS ?? 3);
export const FIND_CONNECTIONS = 20;
export const AUTH = { authorization: `Bearer ${TOKEN}` };

export type ReadFigures = { rps: number; p50: number; p99: number; cpuUs: number; failed: number };
/** A load: the path of each request (drawn again for every request), and headers. */
export type ReadLoad = { path: () => string; headers?: Record<string, string> };

// A fixed pseudo-random sequence (mulberry32), so every run draws the same searches.
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` searches of `length` characters: substrings of the seeded genus and species words, as a person types them. */
export function searches(length: number, count = 200, seed = length): string[] {
  const next = random(seed);
  const words = [...GENERA, ...SPECIES].map((word) => word.toLowerCase()).filter((word) => word.length >= length);
  return Array.from({ length: count }, () => {
    const word = words[Math.floor(next() * words.length)] as string;
    const at = Math.floor(next() * (word.length - length + 1));
    return word.slice(at, at + length);
  });
}

/** Draws one of `values` per request. */
export const oneOf = (values: readonly string[]) => {
  let i = 0;
  return () => values[(i += 1) % values.length] as string;
};

const requestsOf = (spec: ReadLoad): autocannon.Request[] => [
  { method: 'GET', path: '/plants', headers: { ...AUTH, ...spec.headers }, setupRequest: (request) => ({ ...request, path: spec.path() }) },
];

async function measureLoad(server: Started, spec: ReadLoad, connections: number, seconds: number): Promise<ReadFigures> {
  const pid = server.child.pid ?? 0;
  const before = cpuTicks(pid);
  const result = await load(server.port, seconds, { connections, requests: requestsOf(spec) });
  const ticks = cpuTicks(pid) - before;
  const total = result.requests.total;
  return {
    rps: total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: total === 0 ? 0 : ((ticks / TICKS_PER_SECOND) * 1e6) / total,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

/**
 * Throughput of each load in ROUNDS alternating rounds on one running server at FIND_CONNECTIONS connections,
 * each run after a 1 s warm-up of its own load.
 */
export async function interleave<K extends string>(server: Started, loads: Record<K, ReadLoad>, label: string): Promise<Record<K, ReadFigures[]>> {
  const names = Object.keys(loads) as K[];
  const runs = Object.fromEntries(names.map((name) => [name, [] as ReadFigures[]])) as Record<K, ReadFigures[]>;
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const name of round % 2 === 1 ? names : [...names].reverse()) {
      await load(server.port, 1, { connections: FIND_CONNECTIONS, requests: requestsOf(loads[name]) });
      const figures = await measureLoad(server, loads[name], FIND_CONNECTIONS, FIND_SECONDS);
      runs[name].push(figures);
      console.error(`find ${label} round ${round} ${name}: ${f0(figures.rps)} req/s, p99 ${figures.p99} ms, ${f0(figures.cpuUs)} µs CPU/req, failed ${figures.failed}`);
    }
  }
  return runs;
}

/** Latency at one connection: a 1 s warm-up, then FIND_SECONDS of requests one after another. */
export async function oneConnection(server: Started, spec: ReadLoad, label: string): Promise<ReadFigures> {
  await load(server.port, 1, { connections: 1, requests: requestsOf(spec) });
  const figures = await measureLoad(server, spec, 1, FIND_SECONDS);
  console.error(`find ${label} at 1 connection: p50 ${f1(figures.p50)} ms, p99 ${f1(figures.p99)} ms, ${f0(figures.rps)} req/s, failed ${figures.failed}`);
  return figures;
}

export const medianOf = (runs: ReadFigures[], key: keyof ReadFigures): number => median(runs.map((run) => run[key]));

/** The median throughput ratio and each round's, as bench/report.ts's throughputRatio prints them. */
export const ratioOf = (runs: ReadFigures[], against: ReadFigures[]): { value: number; text: string } => {
  const value = medianOf(runs, 'rps') / medianOf(against, 'rps');
  return { value, text: `${value.toFixed(2)} (rounds ${runs.map((run, i) => (run.rps / (against[i]?.rps ?? Number.NaN)).toFixed(2)).join(', ')})` };
};

async function get(port: number, query: string, headers: Record<string, string> = {}): Promise<{ status: number; ids: string[]; headers: Headers }> {
  const response = await fetch(`http://127.0.0.1:${port}/plants${query}`, { headers: { ...AUTH, ...headers } });
  const text = await response.text();
  return { status: response.status, ids: [...text.matchAll(/"id":(\d+)/g)].map((match) => match[1] as string), headers: response.headers };
}

export type Features = { q: boolean; sort: boolean; cursor: boolean; count: boolean };

/** What this build answers: a search no name matches is empty, -id starts at the top, a name page links a cursor, a count comes. */
export async function probe(port: number): Promise<Features> {
  const none = await get(port, '?q=zzqzzqzz&limit=5');
  const down = await get(port, '?sort=-id&limit=2');
  const byName = await get(port, '?sort=name&limit=2');
  const counted = await get(port, '?limit=1', { prefer: 'count=exact' });
  return {
    q: none.status === 200 && none.ids.length === 0,
    sort: down.status === 200 && down.ids.length === 2 && BigInt(down.ids[0] as string) > BigInt(down.ids[1] as string),
    cursor: byName.status === 200 && /[?&]cursor=/.test(byName.headers.get('link') ?? ''),
    count: counted.headers.get('x-total-count') !== null,
  };
}

/**
 * The next pages of a query, found by following its Link `pages` times with limit=1000; every `every`-th page's
 * next link is kept, with limit=100: deep pages reached as a client reaches them.
 */
export async function deepPages(port: number, query: string, pages: number, every = 10): Promise<string[]> {
  const kept: string[] = [];
  let next: string | undefined = `/plants?${query}&limit=1000`;
  for (let page = 1; page <= pages && next !== undefined; page += 1) {
    const response: Response = await fetch(`http://127.0.0.1:${port}${next}`, { headers: AUTH });
    await response.arrayBuffer();
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    if (link === undefined) break;
    const url = new URL(link, `http://127.0.0.1:${port}`);
    next = `${url.pathname}${url.search}`;
    if (page % every === 0) {
      url.searchParams.set('limit', '100');
      kept.push(`${url.pathname}${url.search}`);
    }
  }
  if (kept.length === 0) throw new Error(`no deep page of ${query}: its first page had no next link`);
  return kept;
}
