// How many processes serve the port (docs/decisions/workers.md): one, as the service always ran, or a supervisor
// and several workers. Nothing is refused at any count any more: the store and the limits work across workers.
import os from 'node:os';
import { z } from 'zod';
import type { Parsed } from './fields';

export const MAX_WORKERS = 1024;

const WORKERS_MUST = `must be auto or a whole number from 1 to ${MAX_WORKERS}`;
const workerCount = z
  .string()
  .regex(/^(auto|\d+)$/, WORKERS_MUST)
  .transform((value): 'auto' | number => (value === 'auto' ? 'auto' : Number(value)))
  .refine((value) => value === 'auto' || (value >= 1 && value <= MAX_WORKERS), WORKERS_MUST);

export const workersVariables = {
  WORKERS: workerCount.prefault('auto').describe(
    `Processes serving the port: \`1\` runs one process; more (up to ${MAX_WORKERS}) runs a supervisor that starts that many workers, each the whole service, hands them connections in turn, restarts one that dies and drains all on SIGTERM; \`auto\` is the cores this process may use (\`os.availableParallelism()\`). On SQLite, worker 1 migrates before the others start and the workers' commits take the file's write lock in turn through the supervisor, each commit is told to the other workers' change streams, and one worker (the leader) runs the webhook dispatcher and scheduled backups (docs/operations.md, Workers). Rate limits count across all workers: in Redis with \`REDIS_URL\`, else in the supervisor, which grants each worker hits in chunks. One scrape on \`METRICS_PORT\` merges every worker's series. \`MAX_CONNECTIONS\` and \`LOAD_SHED_LAG_MS\` apply to each worker; \`EVENTS_MAX_STREAMS\` and the in-flight \`Idempotency-Key\` (409) count across all of them, through the supervisor; \`DATABASE_POOL_SIZE\` is split among them (docs/operations.md, Workers).`,
  ),
};


/** `auto`: the cores this process may use, which libuv bounds by the CPU affinity and the cgroup quota. */
export function resolveWorkers(value: 'auto' | number, cores: () => number = os.availableParallelism): number {
  return value === 'auto' ? Math.min(MAX_WORKERS, Math.max(1, cores())) : value;
}

/** Each worker's share of DATABASE_POOL_SIZE, so more workers do not multiply a replica's connections. */
export function poolPerWorker(poolSize: number, workers: number): number {
  return workers === 1 ? poolSize : Math.max(2, Math.ceil(poolSize / workers));
}

export function workersSettings(env: Parsed<typeof workersVariables>, cores?: () => number) {
  return { workers: resolveWorkers(env.WORKERS, cores) };
}
