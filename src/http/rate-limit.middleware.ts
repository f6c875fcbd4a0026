import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { AppError } from '../errors';
import type { Credentials } from '../auth';

/**
 * A fixed one-minute window per accepted token, and per client address (as Express sees it under TRUST_PROXY)
 * for requests without a valid token. Counts live in this process, or in `shared` (Redis, rate-limit.redis.ts)
 * so that every replica counts against one limit; a shared store that fails lets the request through.
 */
export function rateLimitPerMinute(limit: number, readCredentials: (req: Request) => Credentials, shared?: Store): RequestHandler {
  return rateLimit({
    ...(shared === undefined
      ? {}
      : {
          store: shared,
          passOnStoreError: true,
          // The store logs an outage once; express-rate-limit would add a line per request.
          logger: { error: () => undefined, warn: () => undefined },
        }),
    windowMs: 60_000,
    limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => {
      const credentials = readCredentials(req);
      return credentials.kind === 'valid' ? credentials.rateKey : `ip:${ipKeyGenerator(req.ip ?? '')}`;
    },
    // express-rate-limit has set Retry-After already; the error middleware writes the body.
    handler: (_req, _res, next) => next(new AppError('rate_limited')),
  });
}
