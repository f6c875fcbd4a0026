// Idempotency-Key: how long a write's stored answer is kept for a retry with the same key.
import { duration, type Parsed } from './fields';

export const idempotencyVariables = {
  IDEMPOTENCY_TTL: duration(1000, 30 * 24 * 3_600_000).prefault('24h').describe(
    'A write sent with `Idempotency-Key` keeps its answer this long, a whole number with `ms`, `s`, `m` or `h`: a retry with the same key within it gets the same answer (`Idempotent-Replayed: true`) and changes nothing. Expired keys are deleted in the background.',
  ),
};

export function idempotencySettings(env: Parsed<typeof idempotencyVariables>) {
  return { idempotencyTtlMs: env.IDEMPOTENCY_TTL };
}
