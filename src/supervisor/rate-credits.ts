/**
 * The rate limit shared across workers without Redis (docs/decisions/workers.md, D6): the supervisor keeps one fixed
 * one-minute window per limiter and key, as express-rate-limit's MemoryStore does in one process, and hands a
 * worker that asks credits: hits it may count on its own until they are gone. It never grants more than the limit
 * in a window, so the machine never answers more. When a window is spent while other workers hold credits, it asks
 * them back before it answers; credits a worker held when it died are lost with it (the window ends short of the
 * limit, never past it). It must never load the service.
 */
import type { Worker } from 'node:cluster';

const WINDOW_MS = 60_000;
// A holder that has not returned its credits by then is left out (it is exiting); the asks waiting are answered.
const RECLAIM_MS = 200;

/** Worker → supervisor: credits for one key of one limiter (`store` is the limiter's prefix), whose limit is `limit`. */
export type CreditAsk = { type: 'rate-credit'; id: number; store: string; key: string; limit: number };

/**
 * Supervisor → worker: `granted` hits (0: the window is spent), `before` the hits the window had reserved before
 * this grant, and `resetAt` (a Date.now() instant) when the window and these credits end.
 */
export type CreditReply = { type: 'rate-credit'; id: number; granted: number; before: number; resetAt: number };

/** Supervisor → worker: give back the unused credits of this key's window; worker → supervisor: `unused` of them. */
export type CreditReclaim = { type: 'rate-reclaim'; store: string; key: string; resetAt: number; unused?: number };

const typeOf = (message: unknown) => (typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined);

/** What a worker sends the supervisor. */
export function isCreditMessage(message: unknown): message is CreditAsk | CreditReclaim {
  return typeOf(message) === 'rate-credit' || typeOf(message) === 'rate-reclaim';
}

/** What the supervisor sends a worker. */
export function isCreditAnswer(message: unknown): message is CreditReply | CreditReclaim {
  return isCreditMessage(message);
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

type Asked = { worker: Worker; ask: CreditAsk };
type Reclaim = { from: Set<Worker>; asks: Asked[]; timer: NodeJS.Timeout };
type Window = { resetAt: number; reserved: number; holders: Set<Worker>; reclaim?: Reclaim };

export class RateCredits {
  private readonly windows = new Map<string, Window>();
  private swept = 0;

  constructor(
    private readonly workers: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The grant for one ask: a window starts with the first ask for its key, as MemoryStore's does with the first hit. */
  grant(ask: Pick<CreditAsk, 'store' | 'key' | 'limit'>, holder?: Worker): Omit<CreditReply, 'type' | 'id'> {
    const window = this.windowOf(ask.store, ask.key);
    const before = window.reserved;
    const granted = creditsFor(ask.limit, before, this.workers);
    window.reserved += granted;
    if (holder !== undefined && granted > 0) window.holders.add(holder);
    return { granted, before, resetAt: window.resetAt };
  }

  /** A worker's ask, or its answer to a reclaim. */
  received(worker: Worker, message: CreditAsk | CreditReclaim): void {
    if (message.type === 'rate-credit') this.asked(worker, message);
    else this.returned(worker, message);
  }

  /** A worker exited: what it held stays reserved (its use is unknown), and no reclaim waits for it. */
  exited(worker: Worker): void {
    for (const window of this.windows.values()) {
      window.holders.delete(worker);
      if (window.reclaim?.from.delete(worker) === true && window.reclaim.from.size === 0) this.answerWaiting(window);
    }
  }

  private asked(worker: Worker, ask: CreditAsk): void {
    const window = this.windowOf(ask.store, ask.key);
    // A worker asks once its credits are used up: it holds none of this window any more.
    window.holders.delete(worker);
    if (window.reclaim !== undefined) {
      window.reclaim.asks.push({ worker, ask });
      return;
    }
    const others = [...window.holders].filter((holder) => holder.isConnected());
    if (creditsFor(ask.limit, window.reserved, this.workers) > 0 || others.length === 0) {
      this.answer(worker, ask);
      return;
    }
    // Spent while others hold credits: ask them back first (one round trip, only at the end of a window).
    const timer = setTimeout(() => this.answerWaiting(window), RECLAIM_MS);
    window.reclaim = { from: new Set(others), asks: [{ worker, ask }], timer };
    const reclaim: CreditReclaim = { type: 'rate-reclaim', store: ask.store, key: ask.key, resetAt: window.resetAt };
    for (const holder of others) holder.send(reclaim, () => undefined);
  }

  private returned(worker: Worker, back: CreditReclaim): void {
    const window = this.windows.get(nameOf(back.store, back.key));
    if (window === undefined || window.resetAt !== back.resetAt) return;
    window.reserved -= Math.min(back.unused ?? 0, window.reserved);
    window.holders.delete(worker);
    if (window.reclaim?.from.delete(worker) === true && window.reclaim.from.size === 0) this.answerWaiting(window);
  }

  // The asks that waited for a reclaim get what it freed, in order; a window still spent answers 0, no second round.
  private answerWaiting(window: Window): void {
    const waiting = window.reclaim;
    if (waiting === undefined) return;
    clearTimeout(waiting.timer);
    window.reclaim = undefined;
    for (const { worker, ask } of waiting.asks) this.answer(worker, ask);
  }

  // A worker whose channel is closing is exiting, and its answer is not needed.
  private answer(worker: Worker, ask: CreditAsk): void {
    const reply: CreditReply = { type: 'rate-credit', id: ask.id, ...this.grant(ask, worker) };
    if (worker.isConnected()) worker.send(reply, () => undefined);
  }

  private windowOf(store: string, key: string): Window {
    const now = this.now();
    this.sweep(now);
    const name = nameOf(store, key);
    let window = this.windows.get(name);
    if (window === undefined || window.resetAt <= now) {
      const ended = window;
      window = { resetAt: now + WINDOW_MS, reserved: 0, holders: new Set() };
      this.windows.set(name, window);
      // Asks that waited on the ended window's reclaim are answered from the new one.
      if (ended !== undefined) this.answerWaiting(ended);
    }
    return window;
  }

  // Windows past their end go once a minute, so keys seen once do not stay in memory.
  private sweep(now: number): void {
    if (now - this.swept < WINDOW_MS) return;
    this.swept = now;
    for (const [name, window] of this.windows) if (window.resetAt <= now && window.reclaim === undefined) this.windows.delete(name);
  }
}

const nameOf = (store: string, key: string) => `${store}\n${key}`;
