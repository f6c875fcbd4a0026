// Where an answered create's time goes at about 2x the capacity (docs/performance/overload.md): one service
// with WORKERS=auto on a fresh PostgreSQL database, a closed loop of 64 connections for the capacity, then
// 1,800 paced connections at twice its rate for 10 s (the first send 2 s after the start, as the overload row).
// Prints wrk's p99 of the 2xx and the 503s beside the service's own time for each (the request log's `ms`, from
// the request log middleware to the answer): the difference is the time before the service read the request.
//   node dist-bench/workers.overload-where.js [checkout to serve, default this one]
// Run it under `flock /work/wt/BENCHING` like any bench; it uses BENCH_DATABASE_URL as the bench does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CURRENT } from './lib';
import { freshDatabase } from './postgres.section';
import { runWrk, startService } from './workers.wrk';

const p = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? -1;

async function main(): Promise<void> {
  const root = path.resolve(process.argv[2] ?? CURRENT.root);
  const database = await freshDatabase();
  const server = await startService(database.url, 'auto', {}, { ...CURRENT, root });
  try {
    const closed = (seconds: number) => runWrk({ port: server.port, load: 'creates', seconds, connections: 64, timed: true });
    await closed(2);
    const capacity = await closed(6);
    const capacityRate = capacity.ok / capacity.seconds;
    const logged = readFileSync(server.logFile, 'utf8').length;
    const paced = await runWrk({ port: server.port, load: 'creates', seconds: 12, connections: 1800, rate: 2 * capacityRate, holdMs: 2000, timed: true });
    const ok: number[] = [];
    const shed: number[] = [];
    for (const line of readFileSync(server.logFile, 'utf8').slice(logged).split('\n')) {
      if (!line.includes('"msg":"request"')) continue;
      const { status, ms } = JSON.parse(line) as { status: number; ms: number };
      (status === 503 ? shed : ok).push(ms);
    }
    const f = (x: number) => x.toFixed(1);
    console.log(
      `${root}: capacity ${capacityRate.toFixed(0)}/s, p99 ${f(capacity.okP99Ms)} ms; 2x offered ${((paced.ok + paced.shed + paced.other) / (paced.seconds - 2)).toFixed(0)}/s, ` +
        `2xx ${ok.length}, 503 ${shed.length}; 2xx p99 wrk ${f(paced.okP99Ms)} ms, service ${f(p(ok, 0.99))} ms (p50 ${f(p(ok, 0.5))}); ` +
        `503 p99 wrk ${f(paced.shedP99Ms)} ms, service ${f(p(shed, 0.99))} ms`,
    );
  } finally {
    await server.stop();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
