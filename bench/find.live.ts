// The live query's delay: a rename in one client reaching a filtered, sorted watcher in another, while creates run
// at half the rate the server answers them. The watcher is the published client's watchPlants
// (@plant-store/client/live: the first page with its Feed-Position, then the feed with the same q, applied to a
// sorted window), or where a build has none, the stream it follows (GET /plants/events?q=…, read with
// eventsource-parser from the list's position). Each rename moves a stored plant into the search. The delay runs
// from the rename's send to the watcher's first snapshot (or event) with the new name; the rename's own answer
// time is taken beside it, to tell a slow commit from a slow delivery.
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { f0, f1, load, start, STORED, TOKEN } from './lib';
import { createsLikeStored } from './find.creates';
import { AUTH, FIND_SECONDS } from './find.reads';

const RENAMES_PER_SECOND = 20;
const LIVE_SECONDS = Number(process.env.BENCH_FIND_LIVE_SECONDS ?? 10);
const SEARCH = 'watched';

type Watcher = { arrived: Map<number, number>; close: () => void; kind: string };
const RENAMED = /^Watched (\d+) /;

/** watchPlants of the published client, sorted by name, its window wide enough for every rename of the run. */
async function watchWithClient(port: number): Promise<Watcher | undefined> {
  let live: typeof import('@plant-store/client/live');
  try {
    live = await import('@plant-store/client/live');
  } catch {
    return undefined;
  }
  const { createClient } = await import('@plant-store/client');
  const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN });
  const watcher = live.watchPlants(client, { q: SEARCH, sort: 'name', limit: 1000 });
  const arrived = new Map<number, number>();
  const ready = new Promise<void>((resolve) => {
    watcher.subscribe((snapshot) => {
      const now = performance.now();
      if (snapshot.status === 'live') resolve();
      for (const plant of snapshot.plants) {
        const seq = RENAMED.exec(plant.name)?.[1];
        if (seq !== undefined && !arrived.has(Number(seq))) arrived.set(Number(seq), now);
      }
    });
  });
  await ready;
  return { arrived, close: () => watcher.close(), kind: 'watchPlants (sort=name, q=watched)' };
}

/** The filtered stream from the list's position; notes when each renamed plant's event arrived, by its rename's number. */
async function watchStream(port: number): Promise<Watcher> {
  const page = await fetch(`http://127.0.0.1:${port}/plants?q=${SEARCH}&sort=name&limit=100`, { headers: AUTH });
  await page.arrayBuffer();
  // A build without Feed-Position: the stream from now (a position of 0 would replay every event kept).
  const position = page.headers.get('feed-position');
  const from = position === null ? '' : `&after=${position}`;
  const arrived = new Map<number, number>();
  return new Promise((resolve, reject) => {
    const parser = createParser({
      onEvent: (event) => {
        const now = performance.now();
        const seq = RENAMED.exec((JSON.parse(event.data) as { name?: string }).name ?? '')?.[1];
        if (event.event === 'plant.updated' && seq !== undefined && !arrived.has(Number(seq))) arrived.set(Number(seq), now);
      },
    });
    const request = http.get(`http://127.0.0.1:${port}/plants/events?q=${SEARCH}${from}`, { headers: AUTH }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`the watcher's stream answered ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => parser.feed(chunk));
      response.on('error', () => undefined);
      resolve({ arrived, close: () => request.destroy(), kind: 'the stream GET /plants/events?q=watched' });
    });
    request.on('error', () => undefined);
  });
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
};

export type LiveFigures = { watcher: string; p50: number; p99: number; answerP99: number; afterAnswerP99: number; renames: number; arrived: number; createRate: number; createsAnswered: number; failed: number };

/** On a running copy of a store: the create rate, then renames at RENAMES_PER_SECOND beside creates at half of it. */
export async function liveDelay(url: string, store: string): Promise<LiveFigures> {
  const server = await start('service', url);
  try {
    const full = await load(server.port, FIND_SECONDS, { requests: createsLikeStored() });
    const createRate = Math.max(1, Math.round(full.requests.total / FIND_SECONDS / 2));
    const watcher = (await watchWithClient(server.port)) ?? (await watchStream(server.port));
    const sent = new Map<number, number>();
    const answered = new Map<number, number>();
    let failed = 0;
    const creates = load(server.port, LIVE_SECONDS, { overallRate: createRate, requests: createsLikeStored() });
    const renames: Promise<void>[] = [];
    const began = performance.now();
    for (let seq = 1; performance.now() - began < LIVE_SECONDS * 1000; seq += 1) {
      // Distinct stored plants spread over the store, each renamed once.
      const id = 1 + ((seq * 7919) % STORED);
      sent.set(seq, performance.now());
      renames.push(
        fetch(`http://127.0.0.1:${server.port}/plants/${id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ name: `Watched ${seq} Monstera deliciosa` }),
        }).then(
          async (response) => {
            await response.arrayBuffer();
            answered.set(seq, performance.now());
            if (response.status !== 200) failed += 1;
          },
          () => {
            failed += 1;
          },
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, began + (seq * 1000) / RENAMES_PER_SECOND - performance.now())));
    }
    const created = await creates;
    await Promise.all(renames);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    watcher.close();
    const delays = [...sent].filter(([seq]) => watcher.arrived.has(seq)).map(([seq, at]) => (watcher.arrived.get(seq) as number) - at);
    const answers = [...sent].filter(([seq]) => answered.has(seq)).map(([seq, at]) => (answered.get(seq) as number) - at);
    const afterAnswer = [...answered].filter(([seq]) => watcher.arrived.has(seq)).map(([seq, at]) => (watcher.arrived.get(seq) as number) - at);
    const figures = {
      watcher: watcher.kind,
      afterAnswerP99: percentile(afterAnswer, 0.99),
      p50: percentile(delays, 0.5),
      p99: percentile(delays, 0.99),
      answerP99: percentile(answers, 0.99),
      renames: sent.size,
      arrived: delays.length,
      createRate,
      createsAnswered: created.requests.total - created.non2xx,
      failed: failed + created.non2xx + created.errors,
    };
    console.error(`find ${store} live: ${figures.arrived} of ${figures.renames} renames arrived, p50 ${f1(figures.p50)} ms, p99 ${f1(figures.p99)} ms (the PATCH's own answer p99 ${f1(figures.answerP99)} ms, from its answer p99 ${f1(figures.afterAnswerP99)} ms) to ${figures.watcher}, beside ${f0(createRate)} creates/s`);
    return figures;
  } finally {
    await server.stop();
  }
}
