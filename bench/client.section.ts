// The TypeScript client's overhead (BENCH_ONLY=client): a create and a get through @plant-store/client against the
// same calls with bare fetch and JSON.parse, same service, same run, interleaved in blocks; and a page of 1,000
// plants parsed losslessly by the client against JSON.parse of the same text. Goals: at most 10% more time per
// call, at most 2x JSON.parse. Needs clients/typescript/dist (npm run build -w @plant-store/client).
import { freshStore, start, TOKEN, type SectionResult } from './lib';


const CALLS = Number(process.env.BENCH_CLIENT_CALLS ?? 3000);
const BLOCK = 250;
const PARSES = 300;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Alternates blocks of A and B calls; returns the median µs per call of each. */
async function compare(a: (i: number) => Promise<unknown>, b: (i: number) => Promise<unknown>): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let done = 0; done < CALLS; done += BLOCK) {
    for (const [side, run] of [a, b].entries()) {
      const started = performance.now();
      for (let i = done; i < done + BLOCK; i += 1) await run(i);
      times[side as 0 | 1].push(((performance.now() - started) * 1000) / BLOCK);
    }
  }
  return [median(times[0]), median(times[1])];
}

export async function clientSection(): Promise<SectionResult> {
  const { createClient } = await import('@plant-store/client');
  const server = await start('service', freshStore('client'));
  const base = `http://127.0.0.1:${server.port}`;
  const client = createClient({ baseUrl: base, token: TOKEN });
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
  try {
    const first = 2n ** 60n;
    const [createClientUs, createBareUs] = await compare(
      (i) => client.createPlant({ id: first + BigInt(i), name: `Bench ${i}` }),
      async (i) => JSON.parse(await (await fetch(`${base}/plants`, { method: 'POST', headers, body: `{"id":${first + BigInt(CALLS + i)},"name":"Bench ${i}"}` })).text()) as unknown,
    );
    const [getClientUs, getBareUs] = await compare(
      (i) => client.getPlant(first + BigInt(i % CALLS)),
      async (i) => JSON.parse(await (await fetch(`${base}/plants/${first + BigInt(i % CALLS)}`, { headers })).text()) as unknown,
    );
    const text = await (await fetch(`${base}/plants?limit=1000`, { headers })).text();
    const pageClient = createClient({ baseUrl: base, fetch: () => Promise.resolve(new Response(text)) });
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
    const ratio = (a: number, b: number) => `${((a / b - 1) * 100).toFixed(1)}%`;
    return {
      lines: [
        '### Client (`BENCH_ONLY=client`)',
        '',
        `| call (${CALLS} sequential, blocks of ${BLOCK} interleaved) | client µs | bare fetch + JSON.parse µs | client extra (goal ≤ 10%) |`,
        '|---|---|---|---|',
        `| createPlant | ${createClientUs.toFixed(0)} | ${createBareUs.toFixed(0)} | ${ratio(createClientUs, createBareUs)} |`,
        `| getPlant | ${getClientUs.toFixed(0)} | ${getBareUs.toFixed(0)} | ${ratio(getClientUs, getBareUs)} |`,
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
