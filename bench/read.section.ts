// Reads and deletes: GET /plants/{id} and GET /plants?limit=100 (random after) on a store of STORED plants,
// each against the read ceiling (bench/read-ceiling-server.ts) and the read floor (bench/read-floor-server.ts,
// the ceiling plus the store's read) in the same run, then mixed traffic (80% reads by id, 15% creates,
// 5% deletes) with the latency of reads and writes taken apart.
import type autocannon from 'autocannon';
import { storeOfPlants } from './create.section';
import {
  alternate,
  CONNECTIONS,
  f0,
  f1,
  f2,
  failures,
  met,
  freshStore,
  measure,
  median,
  newId,
  ROUNDS,
  row,
  SECONDS,
  STORED,
  TABLE_HEAD,
  TOKEN,
  WARMUP_SECONDS,
  type SectionResult,
  throughputRatio,
} from './lib';

const READ_CEILING = { script: 'read-ceiling-server.js', label: 'read ceiling' };
const READ_FLOOR = { script: 'read-floor-server.js', label: 'read floor' };
// The floor plus the one feature it lacks that every service request has: the request log line.
const WITH_LOG = { CEILING_LOG: '1' };
const AUTH = { authorization: `Bearer ${TOKEN}` };
const randomId = (max: number): number => 1 + Math.floor(Math.random() * max);

export const byIdRequests = (): autocannon.Request[] => [
  { method: 'GET', path: '/plants/1', headers: AUTH, setupRequest: (request) => ({ ...request, path: `/plants/${randomId(STORED)}` }) },
];

export const pageRequests = (): autocannon.Request[] => [
  {
    method: 'GET',
    path: '/plants?limit=100',
    headers: AUTH,
    setupRequest: (request) => ({ ...request, path: `/plants?limit=100&after=${Math.floor(Math.random() * Math.max(1, STORED - 100))}` }),
  },
];

type Kind = 'read' | 'write';
type Sample = { kind: Kind; endedAt: number; ms: number };

/**
 * One request definition that draws its kind each time. Deletes walk down from the highest stored id and reads
 * stay in the lower half, so every request finds its plant (a fresh copy of the store per measurement). Each
 * connection has one request in flight, so setupRequest to onResponse is that request's latency.
 */
function mixedRequests(samples: Sample[]): autocannon.Request[] {
  let nextDelete = STORED;
  return [
    {
      method: 'GET',
      path: '/plants/1',
      headers: AUTH,
      setupRequest: (request, context) => {
        const state = context as { kind?: Kind; started?: number };
        const draw = Math.random();
        state.started = performance.now();
        if (draw < 0.8) {
          state.kind = 'read';
          return { ...request, method: 'GET', path: `/plants/${randomId(Math.floor(STORED / 2))}`, headers: AUTH, body: undefined };
        }
        state.kind = 'write';
        if (draw < 0.95) {
          const id = newId();
          return {
            ...request,
            method: 'POST',
            path: '/plants',
            headers: { ...AUTH, 'content-type': 'application/json' },
            body: `{"id":${id},"name":"Monstera ${id}","tag":"bench"}`,
          };
        }
        const id = nextDelete;
        nextDelete -= 1;
        return { ...request, method: 'DELETE', path: `/plants/${id}`, headers: AUTH, body: undefined };
      },
      onResponse: (_status, _body, context) => {
        const state = context as { kind?: Kind; started?: number };
        const endedAt = performance.now();
        if (state.kind !== undefined && state.started !== undefined) samples.push({ kind: state.kind, endedAt, ms: endedAt - state.started });
      },
    },
  ];
}

const p99 = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.99)] ?? 0;
};

export async function readSection(): Promise<SectionResult> {
  console.error(`building a store of ${STORED} plants…`);
  const full = await storeOfPlants();
  const { medians, runs } = await alternate({
    byId: () => measure('service', freshStore('read-by-id', full), { requests: byIdRequests() }),
    byIdCeiling: () => measure(READ_CEILING, freshStore('read-ceiling'), { requests: byIdRequests() }),
    byIdFloor: () => measure(READ_FLOOR, freshStore('read-floor', full), { requests: byIdRequests() }),
    byIdFloorLog: () => measure(READ_FLOOR, freshStore('read-floor', full), { requests: byIdRequests(), env: WITH_LOG }),
    page: () => measure('service', freshStore('read-page', full), { requests: pageRequests() }),
    pageCeiling: () => measure(READ_CEILING, freshStore('read-ceiling'), { requests: pageRequests() }),
    pageFloor: () => measure(READ_FLOOR, freshStore('read-floor', full), { requests: pageRequests() }),
    pageFloorLog: () => measure(READ_FLOOR, freshStore('read-floor', full), { requests: pageRequests(), env: WITH_LOG }),
  });
  const { byId, byIdCeiling, byIdFloor, byIdFloorLog, page, pageCeiling, pageFloor, pageFloorLog } = medians;
  const heading = `### Reads and deletes: store of ${STORED.toLocaleString('en')} plants, ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s warm-up; medians of ${ROUNDS} alternating rounds`;
  // The goals: what the service adds to the floor (the read ceiling plus the store's own read).
  const goals = [
    `| GET /plants/{id} / floor throughput | ${throughputRatio(runs.byId, runs.byIdFloor)} | ≥ 0.90 | ${met(byId.rps / byIdFloor.rps >= 0.9)} |`,
    `| GET /plants/{id} / floor p99 | ${f2(byId.p99 / byIdFloor.p99)} | ≤ 1.5 | ${met(byId.p99 / byIdFloor.p99 <= 1.5)} |`,
    `| GET /plants?limit=100 / floor throughput | ${throughputRatio(runs.page, runs.pageFloor)} | ≥ 0.90 | ${met(page.rps / pageFloor.rps >= 0.9)} |`,
    `| GET /plants?limit=100 / floor p99 | ${f2(page.p99 / pageFloor.p99)} | ≤ 1.5 | ${met(page.p99 / pageFloor.p99 <= 1.5)} |`,
    `| GET /plants/{id} / floor+log throughput, CPU per request | ${throughputRatio(runs.byId, runs.byIdFloorLog)}, ${f2(byId.cpuPerRequestUs / byIdFloorLog.cpuPerRequestUs)} | measured | |`,
    `| GET /plants?limit=100 / floor+log throughput, CPU per request | ${throughputRatio(runs.page, runs.pageFloorLog)}, ${f2(page.cpuPerRequestUs / pageFloorLog.cpuPerRequestUs)} | measured | |`,
    `| read floor+log / floor throughput (the log line's own cost): one plant, page | ${throughputRatio(runs.byIdFloorLog, runs.byIdFloor)}; ${throughputRatio(runs.pageFloorLog, runs.pageFloor)} | measured | |`,
    `| GET /plants/{id} / ceiling throughput | ${throughputRatio(runs.byId, runs.byIdCeiling)} | measured | |`,
    `| read floor, one plant / ceiling throughput (what the store's read alone leaves) | ${throughputRatio(runs.byIdFloor, runs.byIdCeiling)} | measured | |`,
    `| GET /plants?limit=100 / ceiling throughput | ${throughputRatio(runs.page, runs.pageCeiling)} | measured | |`,
    `| read floor, page / ceiling throughput (what the store's read alone leaves) | ${throughputRatio(runs.pageFloor, runs.pageCeiling)} | measured | |`,
  ];
  const table = [
    ...TABLE_HEAD,
    row('service, GET /plants/{id} (random id)', byId),
    row('read floor, one plant (the read ceiling + the service\'s SELECT on the same store)', byIdFloor),
    row('read floor+log, one plant (the floor + the service\'s request log line)', byIdFloorLog),
    row('read ceiling, one plant (Express 5 + helmet + bearer, from memory)', byIdCeiling),
    row('service, GET /plants?limit=100 (random after)', page),
    row('read floor, page of 100 (the read ceiling + the service\'s SELECT on the same store)', pageFloor),
    row('read floor+log, page of 100', pageFloorLog),
    row('read ceiling, page of 100 (from memory)', pageCeiling),
  ];
  // BENCH_QUICK=1: the goal rows only, without the mixed traffic.
  if (process.env.BENCH_QUICK) {
    return { lines: [heading, '', ...table, '', '| ratio | value | goal | met |', '|---|---:|---|---|', ...goals, ''], failed: failures(...runs.byId, ...runs.page) };
  }

  const readP99s: number[] = [];
  const writeP99s: number[] = [];
  const mixed = await alternate({
    mixed: async () => {
      const samples: Sample[] = [];
      const figures = await measure('service', freshStore('mixed', full), { requests: mixedRequests(samples) });
      // The warm-up shares the sample list: keep the last SECONDS, the measured load.
      const cutoff = (samples[samples.length - 1]?.endedAt ?? 0) - SECONDS * 1000;
      const measured = samples.filter((sample) => sample.endedAt >= cutoff);
      readP99s.push(p99(measured.filter((sample) => sample.kind === 'read').map((sample) => sample.ms)));
      writeP99s.push(p99(measured.filter((sample) => sample.kind === 'write').map((sample) => sample.ms)));
      return figures;
    },
  });
  const mix = mixed.medians.mixed;
  const readP99 = median(readP99s);
  const writeP99 = median(writeP99s);
  const peakRss = Math.max(...runs.byId.map((x) => x.peakRssMiB), ...runs.page.map((x) => x.peakRssMiB), ...mixed.runs.mixed.map((x) => x.peakRssMiB));
  console.error(
    `reads: by id ${f2(byId.rps / byIdCeiling.rps)} of ceiling (floor ${f2(byIdFloor.rps / byIdCeiling.rps)}), page ${f2(page.rps / pageCeiling.rps)} (floor ${f2(pageFloor.rps / pageCeiling.rps)}); mixed ${f0(mix.rps)} req/s, read p99 ${f1(readP99)} ms, write p99 ${f1(writeP99)} ms, shed ${mix.shed}`,
  );

  const lines = [
    heading,
    '',
    ...table,
    row('service, mixed: 80% GET by id, 15% POST, 5% DELETE', mix),
    '',
    '| ratio | value | goal | met |',
    '|---|---:|---|---|',
    ...goals,
    `| mixed: throughput, p99 | ${f0(mix.rps)} req/s, ${f1(mix.p99)} ms | reported | |`,
    `| mixed: reads p99 / writes p99 (a write waits for at least one whole commit) | ${f1(readP99)} / ${f1(writeP99)} ms = ${f2(readP99 / Math.max(writeP99, 0.001))} | ≤ 1 (a read waits at most one commit) | ${met(readP99 <= writeP99)} |`,
    `| peak RSS under the read runs | ${f1(peakRss)} MiB | ≤ 150 MiB | ${met(peakRss <= 150)} |`,
    '',
  ];
  return { lines, failed: failures(...runs.byId, ...runs.page, ...mixed.runs.mixed) };
}
