import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { createClient } from 'redis';
import type { Logger } from '../logger';

// A rate-limit command that takes longer than this counts as Redis being away: the request goes on unlimited.
const COMMAND_TIMEOUT_MS = 500;

/** `store` counts per caller (RATE_LIMIT_PER_MINUTE), `tenantStore` per tenant, under `<prefix>tenant:`. */
export type SharedRateLimit = { store: Store; tenantStore: Store; close: () => Promise<void> };

/**
 * Rate-limit counters in Redis (rate-limit-redis), so every replica counts against one limit. Fails open: while
 * Redis cannot be reached the store throws, express-rate-limit (passOnStoreError) lets the request through, and
 * this logs one line when an outage starts and one when it ends, never one per request. Connects in the
 * background and reconnects by itself; nothing here waits for Redis. Two stores over the one client, each with its
 * own prefix: express-rate-limit refuses one store in two limiters.
 */
export function createSharedRateLimit(url: string, prefix: string, logger: Logger): SharedRateLimit {
  const client = createClient({
    url,
    // Commands fail at once while disconnected instead of queueing behind the reconnect.
    disableOfflineQueue: true,
    socket: { connectTimeout: 1000, reconnectStrategy: (retries: number) => Math.min(100 * (retries + 1), 2000) },
  });
  const counters = [prefix, `${prefix}tenant:`].map((keys) => new RedisStore({ prefix: keys, sendCommand: (...args: string[]) => client.sendCommand(args, { timeout: COMMAND_TIMEOUT_MS }) }));
  const loadScripts = () => {
    // rate-limit-redis keeps these promises and awaits them on each count (reloading on NOSCRIPT); a catch marks
    // them handled, so a load that fails with Redis away can never end the process as an unhandled rejection.
    for (const redis of counters) {
      redis.incrementScriptSha = redis.loadIncrementScript();
      redis.getScriptSha = redis.loadGetScript();
      redis.incrementScriptSha.catch(() => undefined);
      redis.getScriptSha.catch(() => undefined);
    }
  };

  // An outage starts with the first failed connect, lost connection or failed command, and ends when the client
  // is ready again; node-redis reports every reconnect attempt as an error, which is the same news.
  const state = { down: false };
  const outage = (err: unknown) => {
    if (state.down) return;
    state.down = true;
    logger.warn({ err }, 'Redis cannot be reached; rate limiting is off until it answers');
  };
  client.on('error', outage);
  client.on('ready', () => {
    loadScripts();
    if (state.down) logger.info('Redis answers again; rate limiting is back on');
    else logger.info('Redis connected; rate limiting counts there');
    state.down = false;
  });
  client.connect().catch(outage);

  const guarded = async <T>(operation: () => Promise<T>): Promise<T> => {
    try {
      return await operation();
    } catch (error) {
      outage(error);
      throw error;
    }
  };

  const storeOver = (redis: RedisStore): Store => ({
    prefix: redis.prefix,
    localKeys: false,
    init: (options: Options) => {
      redis.windowMs = options.windowMs;
    },
    get: (key: string): Promise<ClientRateLimitInfo | undefined> => guarded(() => redis.get(key)),
    increment: (key: string): Promise<IncrementResponse> => guarded(() => redis.increment(key)),
    decrement: (key: string): Promise<void> => guarded(() => redis.decrement(key)),
    resetKey: (key: string): Promise<void> => guarded(() => redis.resetKey(key)),
  });
  const [store, tenantStore] = counters.map(storeOver) as [Store, Store];
  return {
    store,
    tenantStore,
    close: async () => {
      if (client.isOpen) await client.close();
    },
  };
}
