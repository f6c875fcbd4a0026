/**
 * The rate limit shared across workers without Redis (docs/decisions/workers.md, D6): the supervisor keeps one fixed
 * one-minute window per limiter and key, as express-rate-limit's MemoryStore does in one process, and hands a
 * worker that asks credits: hits it may count on its own until they are gone. It never grants more than the limit
 * in a window, so the machine never answers more; credits a worker still holds when it dies are lost with it
 * (stranded: the window ends short of the limit, never past it). It must never load the service.
 */
import type { Worker } from 'node:cluster';

const WINDOW_MS = 60_000;

/** Worker → supervisor: credits for one key of one limiter (`store` is the limiter's prefix), whose limit is `limit`. */
export type CreditAsk = { type: 'rate-credit'; id: number; store: string; key: string; limit: number };

/**
 * Supervisor → worker: `granted` hits (0: the window is spent), `before` the hits the window had reserved before
 * this grant, and `resetAt` (a Date.now() instant) when the window and these credits end.
 */
export type CreditReply = { type: 'rate-credit'; id: number; granted: number; before: number; resetAt: number };

export function isCreditMessage(message: unknown): message is CreditAsk & CreditReply {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'rate-credit';
}

/**
 * Hits one grant hands a worker: half of what is left spread over every worker, so W workers holding a grant each
 * still leave half for whoever asks next; at least 1 (a small limit goes one hit a time, exact); never past the limit.
 */
export function creditsFor(limit: number, reserved: number, workers: number): number {
  const left = limit - reserved;
  if (left <= 0) return 0;
  return Math.min(left, Math.max(1, Math.floor(left / (2 * workers))));
}

type Window = { resetAt: number; reserved: number };

export class RateCredits {
  private readonly windows = new Map<string, Window>();
  private swept = 0;

  constructor(
    private readonly workers: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The grant for one ask: a window starts with the first ask for its key, as MemoryStore's does with the first hit. */
  grant(ask: Pick<CreditAsk, 'store' | 'key' | 'limit'>): Omit<CreditReply, 'type' | 'id'> {
    const now = this.now();
    this.sweep(now);
    const name = `${ask.store}\n${ask.key}`;
    let window = this.windows.get(name);
    if (window === undefined || window.resetAt <= now) {
      window = { resetAt: now + WINDOW_MS, reserved: 0 };
      this.windows.set(name, window);
    }
    const before = window.reserved;
    const granted = creditsFor(ask.limit, before, this.workers);
    window.reserved += granted;
    return { granted, before, resetAt: window.resetAt };
  }

  /** Answers a worker's ask; a worker whose channel is closing is exiting, and its answer is not needed. */
  asked(worker: Worker, ask: CreditAsk): void {
    const reply: CreditReply = { type: 'rate-credit', id: ask.id, ...this.grant(ask) };
    if (worker.isConnected()) worker.send(reply, () => undefined);
  }

  // Windows past their end go once a minute, so keys seen once do not stay in memory.
  private sweep(now: number): void {
    if (now - this.swept < WINDOW_MS) return;
    this.swept = now;
    for (const [name, window] of this.windows) if (window.resetAt <= now) this.windows.delete(name);
  }
}
