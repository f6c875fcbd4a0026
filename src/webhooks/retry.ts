/** What becomes of an attempt: its settlement on the retry schedule, and the log line of a failed one. */
import type { Logger } from '../logger';
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

/** One line per failed attempt: the event, the subscriber's host, the status or error, the next attempt; never the secret. */
export function logFailedAttempt(logger: Logger, host: string, event: OutboxEvent, settlement: Settlement, failure: string, status: number | undefined, dialed: boolean): void {
  const fields = {
    eventId: event.eventId,
    subscriber: host,
    attempt: settlement.attempts,
    ...(status === undefined ? { error: failure } : { status }),
    ...(dialed ? {} : { dialed: false }),
    nextAttemptAt: settlement.status === 'failed' ? null : new Date(settlement.nextAttemptAt).toISOString(),
  };
  if (settlement.status === 'failed') logger.error(fields, 'webhook attempt failed; no attempt left, event marked failed');
  else logger.warn(fields, 'webhook attempt failed; will retry');
}
