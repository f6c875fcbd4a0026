// What the service turns away before doing work: the rate limit per caller (its counters here or in Redis) and
// load shedding when requests queue.
import { z } from 'zod';
import { integer, redisUrl, type Parsed } from './fields';

export const limitsVariables = {
  RATE_LIMIT_PER_MINUTE: integer(0, 1_000_000).prefault('1200').describe(
    'Requests per minute per token, and per client address for requests without a valid token. `0` disables.',
  ),
  REDIS_URL: redisUrl.optional().describe(
    '`redis://host:6379` keeps the rate limit\'s counters in Redis, shared by every replica; when Redis cannot be reached requests go through unlimited (one log line per outage). Empty: counters in this process (at `WORKERS` above 1, in the supervisor, shared by its workers).',
  ),
  REDIS_KEY_PREFIX: z.string().prefault('plant-store:rate-limit:').describe(
    'Prefix of the rate limit\'s keys in Redis: one per deployment sharing a Redis.',
  ),
  LOAD_SHED_LAG_MS: integer(0, 60_000).prefault('100').describe(
    'Load shedding on queueing: when 64 or more requests of its kind (reads: GET and HEAD; writes: the rest) are in progress and the 64 oldest have each waited longer than this (milliseconds), a new request gets 503 with `Retry-After` instead of joining the line (writes waiting for the store\'s write lock never shed reads; a request with a body waits from when its body is complete: a client sending it slowly is not a queue); health checks are never shed, and neither is a client with 64 connections or fewer in a closed loop. `0` disables.',
  ),
};

export function limitsSettings(env: Parsed<typeof limitsVariables>) {
  return {
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    loadShedLagMs: env.LOAD_SHED_LAG_MS,
  };
}
