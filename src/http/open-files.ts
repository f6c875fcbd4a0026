/**
 * How many connections the process's open-file limit leaves room for: a connection cap the process can reach
 * before it runs out of descriptors, so eviction at the cap (src/http/connections.ts) happens instead of EMFILE
 * resets. Only reads the limit: Node can neither read nor raise RLIMIT_NOFILE itself (no getrlimit/setrlimit).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Config } from '../config';

/** The cap when MAX_CONNECTIONS is unset and the limit leaves room for more, or cannot be read. */
export const DEFAULT_MAX_CONNECTIONS = 1000;

// Descriptors opened after start besides connections and the parts counted one by one below: the listener, a
// backup's two files, the tokens file and its watcher, Redis, JWKS and DNS lookups, the feed's listener.
const SPARE_DESCRIPTORS = 32;

/** The soft RLIMIT_NOFILE; undefined when unlimited or unknown (Windows). */
export function openFileLimit(): number | undefined {
  let text: string;
  try {
    // Linux: the limits of this very process.
    text = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? '';
  } catch {
    try {
      // Other POSIX systems (macOS, whose default is 256): a shell inherits the limit and prints it.
      text = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2000 }).trim();
    } catch {
      return undefined;
    }
  }
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/** Descriptors open now (the store, the log, the metrics listener, Node's own); undefined when unknown. */
function openDescriptors(): number | undefined {
  for (const dir of ['/proc/self/fd', '/dev/fd']) {
    try {
      return readdirSync(dir).length;
    } catch {
      // The next place, or unknown.
    }
  }
  return undefined;
}

/** What the parts that open descriptors later may hold at once: the pool, the webhook connections, scrapes. */
function laterDescriptors(config: Pick<Config, 'database' | 'databasePoolSize' | 'webhooks'>, metricsConnections: number): number {
  const pool = config.database.dialect === 'postgres' ? config.databasePoolSize : 0;
  const webhooks = config.webhooks === undefined ? 0 : config.webhooks.subscribers.length * config.webhooks.connections;
  return pool + webhooks + metricsConnections + SPARE_DESCRIPTORS;
}

export type ConnectionCap = {
  maxConnections: number;
  /** The soft open-file limit the cap was derived from; undefined when it could not be read. */
  openFileLimit: number | undefined;
  /** MAX_CONNECTIONS as set, when it was more than the limit leaves room for and was lowered. */
  lowered?: number;
};

/**
 * MAX_CONNECTIONS when set and within room, otherwise the room: the soft limit less the descriptors open at start
 * and those the configured parts may open later, and never more than DEFAULT_MAX_CONNECTIONS by default. Called
 * once the store and the metrics listener are open. Throws when the limit leaves no room at all.
 */
export function connectionCap(
  config: Pick<Config, 'maxConnections' | 'database' | 'databasePoolSize' | 'webhooks'>,
  metricsConnections: number,
  limit: number | undefined = openFileLimit(),
): ConnectionCap {
  const inUse = openDescriptors();
  const room = limit === undefined || inUse === undefined ? undefined : limit - inUse - laterDescriptors(config, metricsConnections);
  if (room !== undefined && room < 1) {
    throw new Error(
      `The open-file limit (${String(limit)}) leaves no descriptor for connections: ${String(inUse)} are open and the configured parts may open ${laterDescriptors(config, metricsConnections)} more; raise it (ulimit -n, or the container's nofile ulimit).`,
    );
  }
  const wanted = config.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (room === undefined || wanted <= room) return { maxConnections: wanted, openFileLimit: limit };
  return { maxConnections: room, openFileLimit: limit, ...(config.maxConnections === undefined ? {} : { lowered: config.maxConnections }) };
}
