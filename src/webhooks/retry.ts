import type { OutboxEvent, Settlement } from './outbox';

// Retries spread by ±20%, so subscribers that failed together are not all retried at the same instant.
const JITTER = 0.2;

/**
 * What an attempt leaves in the outbox: delivered; pending again after the schedule's next delay (the n-th
 * failure waits schedule[n-1], jittered); or failed once the schedule is spent. `attempts` counts this one.
 */
export function settlementOf(event: OutboxEvent, at: number, failure: string | undefined, schedule: readonly number[], random: () => number): Settlement {
  const attempts = event.attempts + 1;
  if (failure === undefined) return { seq: event.seq, status: 'delivered', attempts, nextAttemptAt: at, at, error: null };
  const delay = schedule[attempts - 1];
  if (delay === undefined) return { seq: event.seq, status: 'failed', attempts, nextAttemptAt: at, at, error: failure };
  return { seq: event.seq, status: 'pending', attempts, nextAttemptAt: at + Math.round(delay * (1 - JITTER + 2 * JITTER * random())), at, error: failure };
}
