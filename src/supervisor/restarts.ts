/**
 * When to fork a worker again, and when to give up (docs/decisions/workers.md, D4): per slot the first restart is
 * at once, then after 100 ms doubling to 10 s; a worker that served 30 s resets its slot's delay. More than
 * max(5, 2 × workers) exits within a minute is a crash loop: the supervisor stops and exits 1, so the
 * orchestrator's own backoff and restart count show it. Pure: the clock is passed in.
 */
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 10_000;
const SERVED_RESETS_MS = 30_000;
const WINDOW_MS = 60_000;

export type Verdict = { restartInMs: number; exitsLastMinute: number; crashLoop: boolean };

export class Restarts {
  private readonly delays = new Map<number, number>();
  private exits: number[] = [];
  private readonly limit: number;

  constructor(workers: number, private readonly now: () => number = Date.now) {
    this.limit = Math.max(5, 2 * workers);
  }

  /** A worker of `slot` exited after serving `servedMs` (0 when it never listened). */
  exited(slot: number, servedMs: number): Verdict {
    const at = this.now();
    this.exits = this.exits.filter((time) => at - time < WINDOW_MS);
    this.exits.push(at);
    const last = servedMs >= SERVED_RESETS_MS ? undefined : this.delays.get(slot);
    const restartInMs = last === undefined ? 0 : Math.min(MAX_DELAY_MS, Math.max(FIRST_DELAY_MS, last * 2));
    this.delays.set(slot, restartInMs);
    return { restartInMs, exitsLastMinute: this.exits.length, crashLoop: this.exits.length > this.limit };
  }
}
