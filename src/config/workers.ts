// How many processes serve the port (docs/decisions/workers.md): one, as the service always ran, or a supervisor
// and several workers. What is still kept per process and cannot yet be right across workers is refused here,
// before anything starts, each with the variable to change.
import os from 'node:os';
import { z } from 'zod';
import { ConfigError } from './config-error';
import type { Parsed } from './fields';
import type { limitsVariables } from './limits';
import type { storeVariables } from './store';
import type { tenantsVariables } from './tenants';

export const MAX_WORKERS = 1024;

const WORKERS_MUST = `must be auto or a whole number from 1 to ${MAX_WORKERS}`;
const workerCount = z
  .string()
  .regex(/^(auto|\d+)$/, WORKERS_MUST)
  .transform((value): 'auto' | number => (value === 'auto' ? 'auto' : Number(value)))
  .refine((value) => value === 'auto' || (value >= 1 && value <= MAX_WORKERS), WORKERS_MUST);

export const workersVariables = {
  WORKERS: workerCount.prefault('1').describe(
    `Processes serving the port: \`1\` runs one process; more (up to ${MAX_WORKERS}) runs a supervisor that starts that many workers, each the whole service, hands them connections in turn, restarts one that dies and drains all on SIGTERM; \`auto\` is the cores this process may use (\`os.availableParallelism()\`). Above 1 it needs PostgreSQL (SQLite across workers waits for the single writer, issue 36) and \`REDIS_URL\` when a rate limit is on. One scrape on \`METRICS_PORT\` merges every worker's series. \`MAX_CONNECTIONS\` and \`LOAD_SHED_LAG_MS\` apply to each worker; \`EVENTS_MAX_STREAMS\` and the in-flight \`Idempotency-Key\` (409) count across all of them, through the supervisor; \`DATABASE_POOL_SIZE\` is split among them (docs/operations.md, Workers).`,
  ),
};

// Read, not owned: each is described by its own slice, and the schema holds it from there.
type ReadVariables = Pick<typeof storeVariables, 'DATABASE_URL'> &
  Pick<typeof limitsVariables, 'RATE_LIMIT_PER_MINUTE' | 'REDIS_URL'> &
  Pick<typeof tenantsVariables, 'RATE_LIMIT_PER_TENANT_PER_MINUTE'>;

/** `auto`: the cores this process may use, which libuv bounds by the CPU affinity and the cgroup quota. */
export function resolveWorkers(value: 'auto' | number, cores: () => number = os.availableParallelism): number {
  return value === 'auto' ? Math.min(MAX_WORKERS, Math.max(1, cores())) : value;
}

/** Each worker's share of DATABASE_POOL_SIZE, so more workers do not multiply a replica's connections. */
export function poolPerWorker(poolSize: number, workers: number): number {
  return workers === 1 ? poolSize : Math.max(2, Math.ceil(poolSize / workers));
}

function refuse(variable: string, why: string): never {
  throw new ConfigError(`invalid configuration:\n✖ ${variable}: ${why}`);
}

export function workersSettings(env: Parsed<typeof workersVariables & ReadVariables>, cores?: () => number) {
  const workers = resolveWorkers(env.WORKERS, cores);
  if (workers > 1) {
    const apart = `with WORKERS=${workers} each worker would count on its own and allow ${workers} times the limit`;
    if (env.RATE_LIMIT_PER_MINUTE > 0 && env.REDIS_URL === undefined) {
      refuse('RATE_LIMIT_PER_MINUTE', `${apart}; set REDIS_URL to share the counters, RATE_LIMIT_PER_MINUTE=0 to turn the limit off, or WORKERS=1`);
    }
    if (env.RATE_LIMIT_PER_TENANT_PER_MINUTE > 0 && env.REDIS_URL === undefined) {
      refuse('RATE_LIMIT_PER_TENANT_PER_MINUTE', `${apart}; set REDIS_URL to share the counters, RATE_LIMIT_PER_TENANT_PER_MINUTE=0 to turn the limit off, or WORKERS=1`);
    }
  }
  return { workers };
}
