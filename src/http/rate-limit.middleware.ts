import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type Store } from 'express-rate-limit';
import { AppError } from '../errors';
import type { Credentials } from '../auth';

/** The limiter, and how a request that stands for several (a batch of writes) pays for the rest. */
export type RateLimit = {
  middleware: RequestHandler;
  /** Counts the request `weight - 1` more times; a 429 (with Retry-After) when that passes the limit. */
  charge: (req: Request, weight: number) => Promise<void>;
};

/** What one limiter counts: by which key, against which variable's limit, and the 429 it answers past it. */
type Window = {
  limit: number;
  keyOf: (req: Request) => string;
  shared: Store | undefined;
  reason: 'rate_limited' | 'tenant_rate_limited';
  variable: string;
  /** The policy's name in the RateLimit headers, beside the other limiter's (express-rate-limit appends them). */
  identifier?: string;
};

/**
 * A fixed one-minute window per key. Counts live in this process (a MemoryStore of the limiter's own), or in
 * `shared` so that every replica counts against one limit (Redis, rate-limit.redis.ts) or every worker of one
 * supervisor does (its credits, rate-limit.credits.ts); a shared store that fails lets the request through.
 */
function fixedWindow({ limit, keyOf, shared, reason, variable, identifier }: Window): RateLimit {
  const store = shared ?? new MemoryStore();
  const middleware = rateLimit({
    store,
    ...(shared === undefined
      ? {}
      : {
          passOnStoreError: true,
          // The store logs an outage once; express-rate-limit would add a line per request.
          logger: { error: () => undefined, warn: () => undefined },
        }),
    windowMs: 60_000,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: keyOf,
    ...(identifier === undefined ? {} : { identifier }),
    // express-rate-limit has set Retry-After already; the error middleware writes the body.
    handler: (_req, _res, next) => next(new AppError(reason)),
  });
  const charge = async (req: Request, weight: number): Promise<void> => {
    const key = keyOf(req);
    let counted: Awaited<ReturnType<Store['increment']>> | undefined;
    try {
      // One at a time: the Store contract counts by one.
      for (let more = weight - 1; more > 0; more -= 1) counted = await store.increment(key);
    } catch (error) {
      // A shared store that fails lets the request through, as the limiter does.
      if (shared !== undefined) return;
      throw error;
    }
    if (counted === undefined || counted.totalHits <= limit) return;
    const seconds = Math.max(1, Math.ceil(((counted.resetTime?.getTime() ?? Date.now() + 60_000) - Date.now()) / 1000));
    throw new AppError(reason, `This batch counts as ${weight} requests, more than ${variable} leaves this minute; nothing was written. Retry after ${seconds} seconds, or send fewer operations.`, { headers: { 'Retry-After': String(seconds) } });
  };
  return { middleware, charge };
}

/** Per accepted token, and per client address (as Express sees it under TRUST_PROXY) for requests without one. */
export function rateLimitPerMinute(limit: number, readCredentials: (req: Request) => Credentials, shared?: Store): RateLimit {
  const keyOf = (req: Request) => {
    const credentials = readCredentials(req);
    return credentials.kind === 'valid' ? credentials.rateKey : `ip:${ipKeyGenerator(req.ip ?? '')}`;
  };
  return fixedWindow({ limit, keyOf, shared, reason: 'rate_limited', variable: 'RATE_LIMIT_PER_MINUTE' });
}

/**
 * Per tenant, all its callers together: runs after authorization, which decided the tenant (the caller's own or
 * Act-As-Tenant's). Its own store, as express-rate-limit requires of a second limiter; with Redis a second prefix.
 */
export function rateLimitPerTenant(limit: number, tenantOf: (req: Request) => string, shared?: Store): RateLimit {
  return fixedWindow({ limit, keyOf: tenantOf, shared, reason: 'tenant_rate_limited', variable: 'RATE_LIMIT_PER_TENANT_PER_MINUTE', identifier: 'tenant' });
}
