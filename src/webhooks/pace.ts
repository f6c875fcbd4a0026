import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * How many deliveries a subscriber may have under way at once: all of WEBHOOK_CONNECTIONS while the event loop
 * has slack, fewer while creates keep it saturated, so deliveries take little of the core a create needs. The
 * floor is never zero: every CREATES_PER_DELIVERY creates grant each subscriber one attempt past the limit,
 * so under a steady overload deliveries still go out at a tenth of the create rate and nothing waits forever.
 * It only paces; it never drops an event (what waits stays pending in the outbox).
 */

/** How late, in ms on average, the event loop ran timers since the previous call: the saturation signal, injected in tests. */
export type LoopDelay = () => number;

export const CREATES_PER_DELIVERY = 10;
/** How often the dispatcher samples the loop and adjusts the limit. */
export const PACE_EVERY_MS = 100;
// Mean lateness at or above SATURATED_MS: requests wait for the loop (when creates came in the window). Below
// SLACK_MS: room to spare. Not utilization: the store's fsync blocks the loop without using the core, so at half
// the create rate the loop is as busy as at saturation (small group commits, more fsyncs), yet nothing waits long.
const SATURATED_MS = 10;
const SLACK_MS = 5;
const RESOLUTION_MS = 5;

/** Node's own measure of how late its timers run: the time work waits for the loop. Stopped with `stop()`. */
export function eventLoopDelay(): { read: LoopDelay; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  return {
    read: () => {
      // The histogram records each interval between its timer's runs, resolution included: lateness is the rest.
      // No sample in the window: one callback held the loop throughout, which is saturation.
      const late = histogram.count === 0 ? Infinity : Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS);
      histogram.reset();
      return late;
    },
    stop: () => histogram.disable(),
  };
}

export class DeliveryPace {
  private current: number;
  private created = 0;

  constructor(
    private readonly max: number,
    private readonly delay: LoopDelay,
  ) {
    this.current = max;
  }

  /** Attempts a subscriber may have under way at once without spending a credit. */
  get limit(): number {
    return this.current;
  }

  /** Creates were committed (counted for the saturation test; their credits are the lanes'). */
  recorded(creates: number): void {
    this.created += creates;
  }

  /**
   * One window: saturated by creates, the limit halves (down to one); with slack, or with no creates at all (a
   * backlog draining on an otherwise idle process), it doubles back up to the maximum. In between it holds.
   */
  sample(): void {
    const delay = this.delay();
    const created = this.created;
    this.created = 0;
    if (delay >= SATURATED_MS && created > 0) this.current = Math.max(1, Math.floor(this.current / 2));
    else if (delay < SLACK_MS || created === 0) this.current = Math.min(this.max, this.current * 2);
  }
}

/** One subscriber's credits: a tenth of an attempt per create, spent by attempts past the limit. */
export class FloorCredits {
  private credits = 0;

  constructor(private readonly max: number) {}

  /** Capped at the pool's size: more could never be spent at once, and a quiet hour must not bank a burst. */
  grant(creates: number): void {
    this.credits = Math.min(this.max, this.credits + creates / CREATES_PER_DELIVERY);
  }

  /** How many attempts may start now, with `inFlight` under way, under `limit` and the credits. */
  room(limit: number, inFlight: number): number {
    return Math.max(0, Math.min(this.max, limit + Math.floor(this.credits)) - inFlight);
  }

  /** `started` attempts began with `inFlight` already under way: those past the limit spend a credit each. */
  spend(limit: number, inFlight: number, started: number): void {
    const pastLimit = started - Math.max(0, limit - inFlight);
    if (pastLimit > 0) this.credits = Math.max(0, this.credits - pastLimit);
  }
}
