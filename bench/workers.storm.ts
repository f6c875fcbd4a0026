// Row 3 of the workers section: the connection storm. 1,000 clients connect at once to an idle service (started,
// ready, nothing else asked of it), each sending one GET /plants/1 on its new connection: the time until every one
// had its answer's status line, WORKERS=1 against WORKERS=auto, in alternating rounds. Node's default listen
// backlog (511) bounds the kernel's accept queue, so part of the storm waits for SYN retries: that is the storm
// a deployment meets. The clients are sockets of the bench's own process (core 1).
import net from 'node:net';
import { f0, f2, median, ROUNDS, TOKEN } from './lib';
import { startService } from './workers.wrk';

/** Times are until the status line of each client's answer, 200 or not; `shed` answered 503, `unanswered` none in 30 s. */
export type Storm = { workers: number; allAnsweredMs: number; p50Ms: number; p99Ms: number; shed: number; other: number; unanswered: number };

/** `clients` sockets opened at once, each sending one GET /plants/1; when each had its status line, and which. */
async function storm(port: number, clients: number): Promise<Omit<Storm, 'workers'>> {
  const request = `GET /plants/1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;
  const startedAt = performance.now();
  const answers = await Promise.all(
    Array.from(
      { length: clients },
      () =>
        new Promise<{ ms: number; status: string } | undefined>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
          let answer = '';
          const end = (value: { ms: number; status: string } | undefined) => {
            socket.destroy();
            resolve(value);
          };
          socket.setTimeout(30_000, () => end(undefined));
          socket.on('error', () => end(undefined));
          socket.on('data', (chunk: Buffer) => {
            answer += chunk.toString('latin1');
            if (answer.includes('\r\n')) end({ ms: performance.now() - startedAt, status: answer.slice(9, 12) });
          });
        }),
    ),
  );
  const answered = answers.filter((a): a is { ms: number; status: string } => a !== undefined);
  const times = answered.map((a) => a.ms).sort((a, b) => a - b);
  return {
    allAnsweredMs: times.at(-1) ?? 0,
    p50Ms: times[Math.floor(times.length / 2)] ?? 0,
    p99Ms: times[Math.floor(times.length * 0.99)] ?? 0,
    shed: answered.filter((a) => a.status === '503').length,
    other: answered.filter((a) => a.status !== '503' && a.status !== '200').length,
    unanswered: clients - answered.length,
  };
}

/** ROUNDS alternating rounds of WORKERS=1 and auto, each a fresh idle service (started, ready, one request served). */
export async function stormRounds(url: string, clients: number): Promise<Record<'one' | 'auto', Storm[]>> {
  const runs: Record<'one' | 'auto', Storm[]> = { one: [], auto: [] };
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const side of round % 2 === 1 ? (['one', 'auto'] as const) : (['auto', 'one'] as const)) {
      const server = await startService(url, side === 'one' ? '1' : 'auto');
      try {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const result = { workers: server.workers, ...(await storm(server.port, clients)) };
        runs[side].push(result);
        console.error(`workers storm round ${round} ${side} (${result.workers} processes): all answered after ${f0(result.allAnsweredMs)} ms, p99 ${f0(result.p99Ms)} ms, 503 ${result.shed}, other ${result.other}, unanswered ${result.unanswered}`);
      } finally {
        await server.stop();
      }
    }
  }
  return runs;
}

export function stormLines(runs: Record<'one' | 'auto', Storm[]>, clients: number): string[] {
  const row = (label: string, xs: Storm[]) =>
    `| ${label} | ${xs[0]?.workers ?? '?'} | ${xs.map((x) => f0(x.allAnsweredMs)).join(', ')} | ${f0(median(xs.map((x) => x.p50Ms)))} | ${f0(median(xs.map((x) => x.p99Ms)))} | ${xs.map((x) => `${x.shed} / ${x.other} / ${x.unanswered}`).join(', ')} |`;
  return [
    `### Connection storm: ${clients} clients connecting at once to an idle service, one GET /plants/1 each (a Node client in the bench's process, core 1); ${ROUNDS} alternating rounds`,
    '',
    '| side | processes | all answered after ms, each round | p50 ms (median) | p99 ms (median) | 503 / other non-200 / unanswered in 30 s, each round |',
    '|---|---:|---:|---:|---:|---:|',
    row('WORKERS=1', runs.one),
    row('WORKERS=auto', runs.auto),
    '',
    `WORKERS=auto / WORKERS=1, time until all answered (medians): ${f2(median(runs.auto.map((x) => x.allAnsweredMs)) / Math.max(1, median(runs.one.map((x) => x.allAnsweredMs))))}. Reported apart; no goal.`,
    '',
  ];
}
