// Edits and the change feed (BENCH_ONLY=feed): PATCH against create in the same run; creates with 1,000 open
// streams that receive nothing (filtered by a tag no plant has) against none; delivery latency to 100 streams
// that receive every change at half the create rate; the service's peak RSS with 1,000 streams open.
import http from 'node:http';
import type autocannon from 'autocannon';
import {
  alternate,
  f0,
  f1,
  failures,
  freshStore,
  load,
  measure,
  measureRunning,
  median,
  row,
  SECONDS,
  start,
  TABLE_HEAD,
  TOKEN,
  WARMUP_SECONDS,
  type SectionResult,
  throughputRatio,
} from './lib';
import { storeOfPlants } from './create.section';

export const SEEDED = 100_000;
// Streams hold a connection each: room for them and the load generator's 50.
const STREAM_ENV = { MAX_CONNECTIONS: '3000', EVENTS_MAX_STREAMS: '2000' };

let edits = 0;
export const patchRequests: autocannon.Request[] = [
  {
    method: 'PATCH',
    path: '/plants/1',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/merge-patch+json' },
    setupRequest: (request) => {
      edits += 1;
      const id = 1 + (edits % SEEDED);
      return { ...request, path: `/plants/${id}`, body: `{"name":"Edited ${edits}"}` };
    },
  },
];

let stamped = 20_000_000_000;
/** Creates whose name carries the time they were sent, for the stream readers to measure delivery. */
const stampedCreates: autocannon.Request[] = [
  {
    method: 'POST',
    path: '/plants',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    setupRequest: (request) => {
      stamped += 1;
      return { ...request, body: `{"id":${stamped},"name":"t${performance.timeOrigin + performance.now()}","tag":"bench"}` };
    },
  },
];

type Streams = {
  latencies: number[];
  /** Each stream's ids of the creates it received (sent after `from`), and how many it received twice. */
  seen: Set<string>[];
  duplicates: () => number;
  from: (sentAfter: number) => void;
  close: () => void;
};

/** Opens `count` streams on the service; each notes how long after its send every stamped create arrived. */
async function openStreams(port: number, count: number, query = ''): Promise<Streams> {
  const latencies: number[] = [];
  const seen: Set<string>[] = [];
  let duplicates = 0;
  // Only creates sent from here on count (the warm-up's are still arriving when the measured load starts).
  let sentAfter = Infinity;
  const requests: http.ClientRequest[] = [];
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve, reject) => {
          const ids = new Set<string>();
          seen.push(ids);
          const request = http.get(`http://127.0.0.1:${port}/plants/events${query}`, { agent, headers: { authorization: `Bearer ${TOKEN}` } }, (response) => {
            if (response.statusCode !== 200) reject(new Error(`stream answered ${response.statusCode}`));
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              const now = performance.timeOrigin + performance.now();
              for (const match of chunk.matchAll(/"id":(\d+),"name":"t([0-9.]+)"/g)) {
                const sent = Number(match[2]);
                if (sent < sentAfter) continue;
                const id = match[1] as string;
                if (ids.has(id)) duplicates += 1;
                ids.add(id);
                latencies.push(now - sent);
              }
            });
            response.on('error', () => undefined);
            resolve();
          });
          request.on('error', () => undefined);
          requests.push(request);
        }),
    ),
  );
  return {
    latencies,
    seen,
    duplicates: () => duplicates,
    from: (time) => {
      sentAfter = time;
    },
    close: () => requests.forEach((request) => request.destroy()),
  };
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};

const PHASE_CYCLES = Number(process.env.BENCH_PHASE_CYCLES ?? 8);
const PHASE_SECONDS = 2;

/**
 * Creates with 1,000 idle streams against none, in one process: short phases interleaved (none, none again,
 * streams; reversed every other cycle), so the VM's drift falls on all three alike and the none/none ratio is
 * the method's A/A. Returns the medians of the per-cycle ratios to the first none.
 */
async function interleavedStreams(): Promise<{ streams: number; again: number; rps: number }> {
  const server = await start('service', freshStore('feed-phases'), STREAM_ENV);
  const rates: Record<'none' | 'again' | 'streams', number[]> = { none: [], again: [], streams: [] };
  try {
    await load(server.port, WARMUP_SECONDS);
    for (let cycle = 0; cycle < PHASE_CYCLES; cycle += 1) {
      const order: (keyof typeof rates)[] = cycle % 2 === 0 ? ['none', 'again', 'streams'] : ['streams', 'again', 'none'];
      for (const phase of order) {
        const streams = phase === 'streams' ? await openStreams(server.port, 1000, '?tag=nobody-has-this-tag') : undefined;
        await load(server.port, 1);
        const result = await load(server.port, PHASE_SECONDS);
        rates[phase].push((result.requests.total - result.non2xx) / PHASE_SECONDS);
        streams?.close();
      }
    }
  } finally {
    await server.stop();
  }
  const ratio = (phase: keyof typeof rates) => median(rates[phase].map((rate, index) => rate / (rates.none[index] as number)));
  return { streams: ratio('streams'), again: ratio('again'), rps: median(rates.none) };
}

export async function feedSection(): Promise<SectionResult> {
  console.error(`building a store of ${SEEDED.toLocaleString('en')} plants to edit…`);
  const seeded = await storeOfPlants(SEEDED);
  const edit = await alternate({
    create: () => measure('service', freshStore('feed-create', seeded)),
    patch: () => measure('service', freshStore('feed-patch', seeded), { requests: patchRequests }),
  });

  const withStreams = async () => {
    const server = await start('service', freshStore('feed-streams'), STREAM_ENV);
    const streams = await openStreams(server.port, 1000, '?tag=nobody-has-this-tag');
    try {
      return await measureRunning(server);
    } finally {
      streams.close();
      await server.stop();
    }
  };
  const idle = await alternate({
    none: () => measure('service', freshStore('feed-no-streams'), { env: STREAM_ENV }),
    streams: withStreams,
  });

  const phases = await interleavedStreams();
  console.error(`interleaved: streams/none ${phases.streams.toFixed(3)}, none/none ${phases.again.toFixed(3)} at ${f0(phases.rps)} req/s`);

  // 100 streams receiving every create, at half the create rate measured above.
  const rate = Math.round(idle.medians.none.rps / 2);
  const server = await start('service', freshStore('feed-delivery'), STREAM_ENV);
  const readers = await openStreams(server.port, 100);
  const offered = await load(server.port, 3, { overallRate: rate, requests: stampedCreates });
  readers.from(performance.timeOrigin + performance.now());
  const measured = await load(server.port, SECONDS, { overallRate: rate, requests: stampedCreates });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  readers.close();
  await server.stop();
  // What every stream should have: each create of the window that any stream saw. autocannon counts the answers
  // that came within its duration, not the requests still in flight as it ends (up to one per connection), which
  // the service commits and the streams deliver.
  const created = new Set(readers.seen.flatMap((ids) => [...ids]));
  const missing = readers.seen.reduce((sum, ids) => sum + created.size - ids.size, 0);
  const answered = measured.requests.total - measured.non2xx;
  const delivery = `${readers.latencies.length} deliveries of ${created.size} creates to 100 streams, ${missing} missing, ${readers.duplicates()} twice; ${answered} creates answered within the window`;
  const p50 = percentile(readers.latencies, 0.5);
  const p99 = percentile(readers.latencies, 0.99);
  console.error(`delivery: ${delivery}, p50 ${f1(p50)} ms, p99 ${f1(p99)} ms (warm-up ${offered.requests.total} creates)`);

  const lines = [
    `### Edits and the change feed: medians of alternating rounds, ${SECONDS} s each`,
    '',
    ...TABLE_HEAD,
    row(`service, POST /plants (store of ${SEEDED.toLocaleString('en')} plants)`, edit.medians.create),
    row('service, PATCH /plants/{id} (a rename of a random stored plant)', edit.medians.patch),
    row('service, POST /plants, no stream open', idle.medians.none),
    row('service, POST /plants, 1,000 streams open filtered by a tag no create has', idle.medians.streams),
    '',
    '| ratio | value | goal |',
    '|---|---:|---|',
    `| PATCH / create throughput | ${throughputRatio(edit.runs.patch, edit.runs.create)} | ≥ 0.90 |`,
    `| creates with 1,000 idle streams / with none | ${throughputRatio(idle.runs.streams, idle.runs.none)} | ≥ 0.90 |`,
    `| the same in one process, ${PHASE_CYCLES} interleaved cycles of ${PHASE_SECONDS} s phases (A/A: none / none) | ${phases.streams.toFixed(2)} (A/A ${phases.again.toFixed(2)}) | ≥ 0.90 |`,
    `| delivery to 100 streams at ${rate} creates/s, p99 from the create's send (an upper bound of from-commit) | ${f1(p99)} ms (p50 ${f1(p50)}; ${delivery}) | < 250 ms |`,
    `| service peak RSS with 1,000 streams open, under creates | ${f1(median(idle.runs.streams.map((run) => run.peakRssMiB)))} MiB | ≤ 200 MiB |`,
    '',
  ];
  return { lines, failed: failures(...edit.runs.create, ...edit.runs.patch, ...idle.runs.none, ...idle.runs.streams) + missing + readers.duplicates() };
}
