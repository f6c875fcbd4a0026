// Part `streams` of BENCH_ONLY=workers (issue 36: "1,000 idle streams spread over the workers cost creates at most
// 10%"): creates (wrk, closed loop, new ids) at WORKERS=auto with 1,000 change-feed streams open against none, in
// short interleaved phases of one service (none, none again, streams; reversed every other cycle), so the VM's
// drift falls on all three alike and none again / none is the method's A/A. The streams are idle as the feed
// section's are: GET /plants/events?tag=<a tag no plant has> with the SSE Accept, so each create is matched against
// every stream of every worker and sent to none (a heartbeat every 15 s is all they carry). Each phase opens its
// streams afresh (round-robin spreads them over the workers; the split is counted with ss) and closes them after.
// BENCH_WORKERS_STREAMS_QUERY='' opens them unfiltered instead: every create then goes to all 1,000, which the
// bench's process reads and drops (on the same two cores: the readers' cost lands on the service's cores too).
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { f0, f2, median, SECONDS, TOKEN, WARMUP_SECONDS } from './lib';
import { runWrk, serviceCpuSeconds, startService, type Service } from './workers.wrk';

export const STREAMS = 1000;
const CYCLES = Number(process.env.BENCH_WORKERS_PHASE_CYCLES ?? 6);
const CONNECTIONS = 50;
const GOAL = 0.9;
const QUERY = process.env.BENCH_WORKERS_STREAMS_QUERY ?? '?tag=nobody-has-this-tag';
// Each stream holds a connection: room for all of them on one worker and for wrk's.
const STREAM_ENV = { MAX_CONNECTIONS: '3000', EVENTS_MAX_STREAMS: '2000' };

type Phase = 'none' | 'again' | 'streams';
const PHASES: Phase[] = ['none', 'again', 'streams'];
type PhaseRun = { rps: number; p99Ms: number; cpuUs: number; failed: number; perWorker: number[]; after: number };
export type StreamsRuns = { workers: number; phases: Record<Phase, PhaseRun[]> };

/** `count` idle streams; resolves once every one answered 200 (rejects on another status). */
async function openStreams(port: number, count: number): Promise<() => void> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  const close = () => requests.forEach((request) => request.destroy());
  const headers = { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' };
  try {
    await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<void>((resolve, reject) => {
            const request = http.get(`http://127.0.0.1:${port}/plants/events${QUERY}`, { agent, headers }, (response) => {
              if (response.statusCode !== 200) reject(new Error(`a stream answered ${response.statusCode}`));
              response.on('error', () => undefined);
              response.resume();
              resolve();
            });
            request.on('error', reject);
            requests.push(request);
          }),
      ),
    );
  } catch (error) {
    close();
    throw error;
  }
  return close;
}

/** Connections established on the service's port, per serving process (ss -p names the process that owns each). */
function connectionsPerProcess(port: number): number[] {
  const out = spawnSync('ss', ['-Htnp', 'state', 'established', `( sport = :${port} )`]).stdout.toString();
  const counts = new Map<string, number>();
  for (const match of out.matchAll(/pid=(\d+)/g)) counts.set(match[1] as string, (counts.get(match[1] as string) ?? 0) + 1);
  return [...counts.values()].sort((a, b) => b - a);
}

async function phase(server: Service, which: Phase): Promise<PhaseRun> {
  const close = which === 'streams' ? await openStreams(server.port, STREAMS) : () => undefined;
  try {
    const perWorker = which === 'streams' ? connectionsPerProcess(server.port) : [];
    await runWrk({ port: server.port, load: 'creates', seconds: 1, connections: CONNECTIONS });
    const cpuBefore = serviceCpuSeconds(server);
    const result = await runWrk({ port: server.port, load: 'creates', seconds: SECONDS, connections: CONNECTIONS });
    const cpu = serviceCpuSeconds(server) - cpuBefore;
    // Still open after the load (a stream whose reader fell behind is ended by the service), wrk's gone by now.
    const after = which === 'streams' ? connectionsPerProcess(server.port).reduce((a, b) => a + b, 0) : 0;
    const failed = result.shed + result.other + result.errors;
    return { rps: result.ok / result.seconds, p99Ms: result.p99Ms, cpuUs: (cpu * 1e6) / Math.max(1, result.ok), failed, perWorker, after };
  } finally {
    close();
    // The service ends the closed streams; let that settle before the next phase measures.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** One service at WORKERS=auto on `url` (a fresh SQLite file or PostgreSQL database): CYCLES cycles of the phases. */
export async function streamsRuns(url: string, label: string): Promise<StreamsRuns> {
  const server = await startService(url, 'auto', STREAM_ENV);
  const phases: Record<Phase, PhaseRun[]> = { none: [], again: [], streams: [] };
  try {
    await runWrk({ port: server.port, load: 'creates', seconds: WARMUP_SECONDS, connections: CONNECTIONS });
    for (let cycle = 1; cycle <= CYCLES; cycle += 1) {
      for (const which of cycle % 2 === 1 ? PHASES : [...PHASES].reverse()) {
        const run = await phase(server, which);
        phases[which].push(run);
        console.error(
          `workers streams ${label} cycle ${cycle} ${which}: ${f0(run.rps)} creates/s, p99 ${f0(run.p99Ms)} ms, service ${f0(run.cpuUs)} µs/create, failed ${run.failed}` +
            (which === 'streams' ? `, connections per process ${run.perWorker.join(' / ')}, ${run.after} after the load` : ''),
        );
      }
    }
  } finally {
    await server.stop();
  }
  return { workers: server.workers, phases };
}

/** Per cycle, a phase's figure over the first none's; the median of those. */
function cycleRatio(runs: StreamsRuns, which: Phase, key: 'rps' | 'cpuUs'): { value: number; rounds: number[] } {
  const rounds = runs.phases[which].map((run, index) => run[key] / (runs.phases.none[index]?.[key] ?? Number.NaN));
  return { value: median(rounds), rounds };
}

export function streamsLines(results: { label: string; runs: StreamsRuns }[]): { lines: string[]; failed: number } {
  const lines = [
    `### ${STREAMS} ${QUERY === '' ? 'unfiltered (every create sent to each)' : `idle (${QUERY})`} change-feed streams over the workers against none: creates at WORKERS=auto (wrk, ${CONNECTIONS} connections, closed loop), ${CYCLES} cycles of three ${SECONDS} s phases (each after 1 s of the same load)`,
    '',
    '| store, phase | processes | creates/s (median) | each cycle | p99 ms (median) | service CPU µs/create (median) | streams per process (connections on the port, each cycle) |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const goals = ['', '| goal | streams / none, creates/s: median of cycles (each cycle) | A/A: none again / none (each cycle) | service CPU per create, streams / none (each cycle) | its A/A | goal | verdict |', '|---|---:|---:|---:|---:|---|---|'];
  let failed = 0;
  for (const { label, runs } of results) {
    for (const which of PHASES) {
      const xs = runs.phases[which];
      const split = which === 'streams' ? xs.map((x) => `${x.perWorker.join(' / ')} (${x.after} after)`).join('; ') : '';
      const name = { none: 'none', again: 'none again (A/A)', streams: `${STREAMS} ${QUERY === '' ? 'unfiltered' : 'idle'} streams` }[which];
      lines.push(`| ${label}, ${name} | ${runs.workers} | ${f0(median(xs.map((x) => x.rps)))} | ${xs.map((x) => f0(x.rps)).join(', ')} | ${f0(median(xs.map((x) => x.p99Ms)))} | ${f0(median(xs.map((x) => x.cpuUs)))} | ${split} |`);
      failed += xs.reduce((n, x) => n + x.failed, 0);
    }
    const ratio = cycleRatio(runs, 'streams', 'rps');
    const aa = cycleRatio(runs, 'again', 'rps');
    const cpu = cycleRatio(runs, 'streams', 'cpuUs');
    const cpuAa = cycleRatio(runs, 'again', 'cpuUs');
    const spread = Math.abs(aa.value - 1);
    const margin = Math.abs(ratio.value - GOAL) / GOAL;
    const verdict = margin > spread ? (ratio.value >= GOAL ? 'met' : 'missed') : `not decided (within the A/A's ${f0(spread * 100)}%)`;
    goals.push(
      `| ${label}: creates with ${STREAMS} ${QUERY === '' ? 'unfiltered' : 'idle'} streams / without | ${f2(ratio.value)} (${ratio.rounds.map(f2).join(', ')}) | ${f2(aa.value)} (${aa.rounds.map(f2).join(', ')}) | ${f2(cpu.value)} (${cpu.rounds.map(f2).join(', ')}) | ${f2(cpuAa.value)} | ≥ ${GOAL} | ${verdict} |`,
    );
  }
  return { lines: [...lines, ...goals, ''], failed };
}
