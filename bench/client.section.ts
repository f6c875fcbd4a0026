// The TypeScript client's overhead (BENCH_ONLY=client): a create and a get through @plant-store/client against the
// same calls with bare fetch and JSON.parse, same service, same run, in alternating blocks; an A/A row (bare fetch
// against itself, the same way) gives the spread one run can resolve; and a page of 1,000 plants parsed losslessly
// by the client against JSON.parse of the same text. Goals: at most 10% more time per call, at most 2x JSON.parse.
// Besides wall time per call, the CPU this process spent per call: the client's own cost, which the server's time
// and the machine's other load do not dilute. Needs clients/typescript/dist (npm run build -w @plant-store/client).
import os from 'node:os';
import { freshStore, median, start, TOKEN, type SectionResult } from './lib';

const CALLS = Number(process.env.BENCH_CLIENT_CALLS ?? 3000);
const BLOCK = 250;
// Unrecorded calls of each side before the first block: JIT, connections and the store's first pages warm for both.
const WARMUP = 500;
const PARSES = 300;

type Side = { wallUs: number; cpuUs: number };
type Call = () => Promise<unknown>;

/**
 * After WARMUP unrecorded calls of each side, interleaved, runs CALLS calls of each side in blocks of BLOCK, A
 * then B, then B then A, so neither side always goes first;
 * returns each side's median wall µs and caller CPU µs per call over its blocks.
 */
async function compare(a: Call, b: Call): Promise<[Side, Side]> {
  for (let i = 0; i < WARMUP; i += 1) {
    await a();
    await b();
  }
  const wall: [number[], number[]] = [[], []];
  const cpu: [number[], number[]] = [[], []];
  for (let block = 0; block < CALLS / BLOCK; block += 1) {
    const order: (0 | 1)[] = block % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) {
      const run = side === 0 ? a : b;
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < BLOCK; i += 1) await run();
      wall[side].push(((performance.now() - started) * 1000) / BLOCK);
      const used = process.cpuUsage(cpuBefore);
      cpu[side].push((used.user + used.system) / BLOCK);
    }
  }
  const figures = (side: 0 | 1): Side => ({ wallUs: median(wall[side]), cpuUs: median(cpu[side]) });
  return [figures(0), figures(1)];
}

const loadAverage = () => (os.loadavg()[0] ?? 0).toFixed(1);
const extra = (a: number, b: number) => `${a >= b ? '+' : ''}${((a / b - 1) * 100).toFixed(1)}%`;
const tableRow = (name: string, [a, b]: [Side, Side]) =>
  `| ${name} | ${a.wallUs.toFixed(0)} | ${b.wallUs.toFixed(0)} | ${extra(a.wallUs, b.wallUs)} | ${a.cpuUs.toFixed(0)} | ${b.cpuUs.toFixed(0)} | ${extra(a.cpuUs, b.cpuUs)} |`;

export async function clientSection(): Promise<SectionResult> {
  const { createClient } = await import('@plant-store/client');
  const server = await start('service', freshStore('client'));
  const base = `http://127.0.0.1:${server.port}`;
  const client = createClient({ baseUrl: base, token: TOKEN });
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
  // One counter for every side: each create appends at the end of the id order, as no side could otherwise
  // insert below another's ids (SQLite's rowid append is the cheaper insert).
  const first = 2n ** 60n;
  let next = first;
  // The same request by hand as the client sends: every write carries a new Idempotency-Key (the service stores its answer).
  const keyed = () => ({ ...headers, 'Idempotency-Key': crypto.randomUUID() });
  const bareCreate = async () => JSON.parse(await (await fetch(`${base}/plants`, { method: 'POST', headers: keyed(), body: `{"id":${next++},"name":"Bench"}` })).text()) as unknown;
  const clientCreate = () => client.createPlant({ id: next++, name: 'Bench' });
  let read = 0n;
  const nextRead = () => first + (read++ % BigInt(CALLS));
  const bareGet = async () => JSON.parse(await (await fetch(`${base}/plants/${nextRead()}`, { headers })).text()) as unknown;
  const clientGet = () => client.getPlant(nextRead());
  try {
    const load = [`before ${loadAverage()}`];
    const create = await compare(clientCreate, bareCreate);
    const createAA = await compare(bareCreate, bareCreate);
    const get = await compare(clientGet, bareGet);
    const getAA = await compare(bareGet, bareGet);
    load.push(`after ${loadAverage()}`);
    // The client's own cost, with neither server nor network: both sides get the same answers from an in-process
    // fetch, so what remains is the client's work (headers, the id's digits, the lossless parse, retry logic).
    const answer = (init?: RequestInit) => Promise.resolve(new Response(init?.method === 'POST' ? '{"name":"Bench"}' : `{"id":${first},"name":"Bench"}`));
    const local = createClient({ baseUrl: base, token: TOKEN, fetch: (_input, init) => answer(init) });
    const ownCreate = await compare(
      () => local.createPlant({ id: next++, name: 'Bench' }),
      async () => JSON.parse(await (await answer({ method: 'POST', headers: keyed(), body: `{"id":${next++},"name":"Bench"}` })).text()) as unknown,
    );
    const ownGet = await compare(
      () => local.getPlant(first),
      async () => JSON.parse(await (await answer({ headers })).text()) as unknown,
    );

    const text = await (await fetch(`${base}/plants?limit=1000`, { headers })).text();
    // A list answer carries its Feed-Position, which the client requires.
    const pageClient = createClient({ baseUrl: base, fetch: () => Promise.resolve(new Response(text, { headers: { 'Feed-Position': '0' } })) });
    // Alternating, after a warm-up of each: the median µs of each way of reading the same page.
    const lossless: number[] = [];
    const plain: number[] = [];
    for (let round = -50; round < PARSES; round += 1) {
      let started = performance.now();
      await pageClient.listPlants();
      if (round >= 0) lossless.push((performance.now() - started) * 1000);
      started = performance.now();
      JSON.parse(await new Response(text).text());
      if (round >= 0) plain.push((performance.now() - started) * 1000);
    }
    const [losslessUs, parseUs] = [median(lossless), median(plain)];
    return {
      lines: [
        '### Client (`BENCH_ONLY=client`)',
        '',
        `${CALLS} sequential calls a side, blocks of ${BLOCK} alternating (AB, BA, …); medians of the blocks. Load average (1 min) ${load.join(', ')}.`,
        '',
        '| call: A against B | A wall µs | B wall µs | A extra (goal ≤ 10%) | A CPU µs | B CPU µs | A extra CPU |',
        '|---|---:|---:|---:|---:|---:|---:|',
        tableRow('createPlant: client against bare fetch + JSON.parse', create),
        tableRow('A/A create: bare fetch against itself', createAA),
        tableRow('getPlant: client against bare fetch + JSON.parse', get),
        tableRow('A/A get: bare fetch against itself', getAA),
        tableRow('createPlant, in-process fetch (no server): client against bare', ownCreate),
        tableRow('getPlant, in-process fetch (no server): client against bare', ownGet),
        '',
        `Page of 1,000 plants (${text.length} bytes), median of ${PARSES}: lossless listPlants ${losslessUs.toFixed(0)} µs, ` +
          `JSON.parse ${parseUs.toFixed(0)} µs: ${(losslessUs / parseUs).toFixed(2)}x (goal ≤ 2x).`,
        '',
      ],
      failed: 0,
    };
  } finally {
    await server.stop();
  }
}

