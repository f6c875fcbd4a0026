/**
 * What becomes of an event's attempts: its settlement on the retry schedule, the window after which a waiting
 * event of an unreachable subscriber expires, and the log lines of a failed attempt and of an expired event.
 */
import type { Logger } from '../logger';
import type { OutboxEvent, Settlement } from './outbox';

// Retries spread by ±20%, so subscribers that failed together are not all retried at the same instant.
const JITTER = 0.2;

// RFC 9110 15.5.11: the target "is no longer available … and this condition is likely to be permanent".
// A subscriber that says so will not take this event later either: no retry is spent on it.
export const GONE = 410;

/**
 * What an attempt leaves in the outbox: delivered; pending again after the schedule's next delay (the n-th
 * failure waits schedule[n-1], jittered); or failed once the schedule is spent, or at once on a 410 Gone.
 * `attempts` counts this one.
 */
export function settlementOf(
  event: OutboxEvent,
  at: number,
  failure: string | undefined,
  status: number | undefined,
  schedule: readonly number[],
  random: () => number,
): Settlement {
  const attempts = event.attempts + 1;
  if (failure === undefined) return { seq: event.seq, status: 'delivered', attempts, nextAttemptAt: at, at, error: null };
  const delay = status === GONE ? undefined : schedule[attempts - 1];
  if (delay === undefined) return { seq: event.seq, status: 'failed', attempts, nextAttemptAt: at, at, error: failure };
  return { seq: event.seq, status: 'pending', attempts, nextAttemptAt: at + Math.round(delay * (1 - JITTER + 2 * JITTER * random())), at, error: failure };
}

/**
 * How long an event may wait, due, for an unreachable subscriber before it is marked failed without another
 * attempt: the whole schedule at its longest jitter, the time its attempts would have taken.
 */
export function retryWindowMs(schedule: readonly number[]): number {
  return Math.round(schedule.reduce((sum, delay) => sum + delay, 0) * (1 + JITTER));
}

/** An event whose retry window passed while its subscriber was unreachable: failed, its attempts as they were. */
export function expiredSettlement(event: OutboxEvent, at: number, unreachable: string): Settlement {
  return { seq: event.seq, status: 'failed', attempts: event.attempts, nextAttemptAt: at, at, error: `${unreachable}; retry window passed while unreachable` };
}

export function logExpired(logger: Logger, host: string, event: OutboxEvent, unreachable: string): void {
  logger.error(
    { eventId: event.eventId, subscriber: host, attempts: event.attempts, error: unreachable },
    'webhook event not delivered: its retry window passed while the subscriber was unreachable; event marked failed',
  );
}

/** One line per failed attempt: the event, the subscriber's host, the status or error, the next attempt; never the secret. */
export function logFailedAttempt(logger: Logger, host: string, event: OutboxEvent, settlement: Settlement, failure: string, status: number | undefined): void {
  const fields = {
    eventId: event.eventId,
    subscriber: host,
    attempt: settlement.attempts,
    ...(status === undefined ? { error: failure } : { status }),
    nextAttemptAt: settlement.status === 'failed' ? null : new Date(settlement.nextAttemptAt).toISOString(),
  };
  if (status === GONE) logger.error(fields, 'webhook subscriber answered 410 Gone; event marked failed without retry (remove the URL from WEBHOOK_URLS if it is gone for good)');
  else if (settlement.status === 'failed') logger.error(fields, 'webhook attempt failed; no attempt left, event marked failed');
  else logger.warn(fields, 'webhook attempt failed; will retry');
}
