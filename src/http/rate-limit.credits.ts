import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';

/**
 * A worker's rate-limit counters at WORKERS > 1 without REDIS_URL (docs/decisions/workers.md, "Rate limits across
 * workers"). The supervisor owns each key's one-minute window and grants this worker credits: hits it counts here,
 * with no round trip, until they are gone; then it asks again. A window the supervisor says is spent counts every
 * further hit past the limit here, until it ends. When another worker finds a window spent, the supervisor asks
 * this one's unused credits of it back (release). It never lets more through than the supervisor granted.
 */

/** The supervisor's answer: `granted` hits (0: spent), `before` what the window had reserved, `resetAt` its end. */
export type Grant = { granted: number; before: number; resetAt: number };
/**
 * The way to the supervisor: `ask` for credits of one key of one limiter (`store`, the limiter's prefix);
 * `onReclaim` registers what gives a window's unused credits back when the supervisor finds it spent.
 */
export type CreditChannel = {
  ask: (store: string, key: string, limit: number) => Promise<Grant>;
  onReclaim: (release: (store: string, key: string, resetAt: number) => number) => void;
};

// `base + used` is the window's count as this worker knows it: exact while a key stays on one worker; other
// workers' hits since this worker's last grant are missing from it, their unused credits are counted in it.
type Credit = { resetAt: number; base: number; used: number; left: number; spent: boolean };

const SWEEP_MS = 60_000;

class CreditStore implements Store {
  readonly localKeys = false;
  private limit = 0;
  private readonly credits = new Map<string, Credit>();
  private readonly asking = new Map<string, Promise<void>>();
  private swept = 0;

  constructor(
    readonly prefix: string,
    private readonly ask: CreditChannel['ask'],
    private readonly now: () => number,
  ) {}

  init(options: Options): void {
    // The limiters of rate-limit.middleware.ts pass a number.
    if (typeof options.limit === 'number') this.limit = options.limit;
  }

  get(key: string): ClientRateLimitInfo | undefined {
    const credit = this.current(key, this.now());
    return credit === undefined ? undefined : infoOf(credit);
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    for (;;) {
      const credit = this.current(key, this.now());
      if (credit !== undefined && (credit.left > 0 || credit.spent)) {
        if (credit.left > 0) credit.left -= 1;
        credit.used += 1;
        return infoOf(credit);
      }
      // Concurrent hits on one key share one ask; whoever finds the grant used up by the others asks again.
      await this.refill(key);
    }
  }

  /** A hit not counted after all (express-rate-limit's skip options) gives its credit back to this worker. */
  decrement(key: string): void {
    const credit = this.current(key, this.now());
    if (credit === undefined || credit.used === 0) return;
    credit.used -= 1;
    if (!credit.spent) credit.left += 1;
  }

  /** Forgets this worker's credits for the key; what they reserved stays reserved until the window ends. */
  resetKey(key: string): void {
    this.credits.delete(key);
  }

  /** The supervisor asks this window's unused credits back: they are dropped here and their count returned. */
  release(key: string, resetAt: number): number {
    const credit = this.credits.get(key);
    if (credit === undefined || credit.resetAt !== resetAt) return 0;
    const unused = credit.left;
    credit.left = 0;
    return unused;
  }

  private refill(key: string): Promise<void> {
    let pending = this.asking.get(key);
    if (pending === undefined) {
      pending = this.ask(this.prefix, key, this.limit)
        .then(({ granted, before, resetAt }) => {
          this.credits.set(key, { resetAt, base: before, used: 0, left: granted, spent: granted === 0 });
        })
        .finally(() => this.asking.delete(key));
      this.asking.set(key, pending);
    }
    return pending;
  }

  // A credit ends with its window; windows past their end are dropped once a minute.
  private current(key: string, now: number): Credit | undefined {
    if (now - this.swept >= SWEEP_MS) {
      this.swept = now;
      for (const [each, credit] of this.credits) if (credit.resetAt <= now) this.credits.delete(each);
    }
    const credit = this.credits.get(key);
    return credit !== undefined && credit.resetAt > now ? credit : undefined;
  }
}

function infoOf(credit: Credit): ClientRateLimitInfo {
  return { totalHits: credit.base + credit.used, resetTime: new Date(credit.resetAt) };
}

/** A store per limiter, as express-rate-limit requires: per caller (RATE_LIMIT_PER_MINUTE) and per tenant. */
export function createCreditRateLimit(channel: CreditChannel, now: () => number = Date.now): { store: Store; tenantStore: Store } {
  const stores = [new CreditStore('caller:', channel.ask, now), new CreditStore('tenant:', channel.ask, now)] as const;
  channel.onReclaim((prefix, key, resetAt) => stores.find((store) => store.prefix === prefix)?.release(key, resetAt) ?? 0);
  return { store: stores[0], tenantStore: stores[1] };
}
