// The writer thread (BENCH_ONLY=writer; issue 36 part 3, docs/decisions/writer.md): creates at one process with the
// group commit on the writer thread against a baseline checkout whose commit ran on the event loop (BENCH_BASELINE,
// run by BENCH_BASELINE_NODE), in alternating rounds with an A/A; and /healthz while another process holds SQLite's
// write lock for 2 s with a create waiting, probed one request at a time every 5 ms, its p99 on each build.
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  alternate,
  baselineRuntime,
  CURRENT,
  createRequests,
  f2,
  failures,
  freshStore,
  measure,
  median,
  newId,
  row,
  ROUNDS,
  SECONDS,
  start,
  TABLE_HEAD,
  throughputRatio,
  TOKEN,
  type Figures,
  type Runtime,
  type SectionResult,
} from './lib';

const CREATE_GOAL = 1.0;
const HEALTH_GOAL_MS = 5;
const HOLD_MS = 2000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function send(port: number, method: string, url: string, body?: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method, path: url, agent, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
    });
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    request.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.99)] ?? 0;

/** /healthz p99 (ms) while this process holds BEGIN IMMEDIATE for 2 s and a create waits; the create's status. */
async function healthWhileLocked(name: string, runtime: Runtime): Promise<{ p99: number; probes: number; created: number }> {
  const url = freshStore(`writer-lock-${name}`);
  const server = await start('service', url, { DATABASE_BUSY_TIMEOUT_MS: '10000' }, runtime);
  try {
    await send(server.port, 'POST', '/plants', JSON.stringify({ id: newId(), name: 'Before' }));
    const locker = new Database(url.slice('file:'.length));
    locker.exec('BEGIN IMMEDIATE');
    const lockedAt = performance.now();
    const create = send(server.port, 'POST', '/plants', JSON.stringify({ id: newId(), name: 'Waiting' }));
    const times: number[] = [];
    while (performance.now() - lockedAt < HOLD_MS) {
      times.push((await send(server.port, 'GET', '/healthz')).ms);
      await sleep(5);
    }
    locker.exec('COMMIT');
    locker.close();
    return { p99: p99(times), probes: times.length, created: (await create).status };
  } finally {
    await server.stop();
  }
}

export async function writerSection(): Promise<SectionResult> {
  const baseline = baselineRuntime(process.env.BENCH_BASELINE_NODE ?? process.execPath);
  const runtimes: Record<string, Runtime> = {
    current: { ...CURRENT, label: 'writer thread' },
    again: { ...CURRENT, label: 'writer thread again' },
    ...(baseline === undefined ? {} : { baseline: { ...baseline, label: `baseline ${path.basename(baseline.root)}` } }),
  };
  const lines = [`## Writer thread (\`BENCH_ONLY=writer\`), ${ROUNDS} alternating rounds of ${SECONDS} s`, ''];
  if (baseline === undefined) lines.push('No BENCH_BASELINE: the A/A alone.', '');
  console.error('writer: creates');
  const { medians, runs } = await alternate(
    Object.fromEntries(
      Object.entries(runtimes).map(([name, runtime]) => [name, () => measure('service', freshStore(`writer-${name}`), { requests: createRequests(), runtime })]),
    ),
  );
  const [current, again, base] = [runs.current ?? [], runs.again ?? [], runs.baseline ?? []];
  const cpu = (figures: Figures[]) => median(figures.map((run) => run.cpuPerRequestUs));
  lines.push(
    `Goal: creates at one process with the writer thread at least ${CREATE_GOAL} of the baseline's; /healthz p99 under ${HEALTH_GOAL_MS} ms while another process holds the write lock ${HOLD_MS / 1000} s.`,
    '',
    '| row | writer / baseline, req/s | CPU µs/req, writer / baseline | A/A (again / writer) |',
    '|---|---|---|---|',
    `| creates | ${base.length > 0 ? throughputRatio(current, base) : 'no baseline'} | ${base.length > 0 ? f2(cpu(current) / cpu(base)) : '–'} | ${throughputRatio(again, current)} |`,
    '',
    ...TABLE_HEAD,
    ...Object.entries(runtimes).map(([name, runtime]) => row(runtime.label, medians[name] as Figures)),
    '',
  );
  lines.push('| build | /healthz p99 ms while locked | probes | waiting create | goal met |', '|---|---:|---:|---:|---|');
  for (const [name, runtime] of Object.entries(runtimes)) {
    if (name === 'again') continue;
    console.error(`writer: /healthz while locked, ${runtime.label}`);
    const held = await healthWhileLocked(name, runtime);
    lines.push(`| ${runtime.label} | ${f2(held.p99)} | ${held.probes} | ${held.created} | ${held.p99 < HEALTH_GOAL_MS ? 'yes' : 'no'} |`);
  }
  agent.destroy();
  return { lines: [...lines, ''], failed: failures(...Object.values(medians)) };
}
