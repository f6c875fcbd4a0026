import type { Worker } from 'node:cluster';
import { createCreditRateLimit, type CreditChannel } from '../../src/http/rate-limit.credits';
import { creditsFor, RateCredits, type CreditReclaim, type CreditReply } from '../../src/supervisor/rate-credits';

type Release = Parameters<CreditChannel['onReclaim']>[0];

/**
 * `count` workers' stores over one supervisor's RateCredits, each message delivered a microtask later as the IPC
 * channel would; `asks` counts the asks.
 */
function machine(count: number, limit: number, now: () => number = Date.now) {
  const credits = new RateCredits(count, now);
  const asks: string[] = [];
  const stores = Array.from({ length: count }, () => {
    const waiting = new Map<number, (reply: CreditReply) => void>();
    let release: Release = () => 0;
    let last = 0;
    const deliver = (message: CreditReply | CreditReclaim) => {
      if (message.type === 'rate-credit') waiting.get(message.id)?.(message);
      else credits.received(worker, { ...message, unused: release(message.store, message.key, message.resetAt) });
    };
    const worker = { isConnected: () => true, send: (message: CreditReply | CreditReclaim) => queueMicrotask(() => deliver(message)) } as unknown as Worker;
    const channel: CreditChannel = {
      ask: (store, key, max) =>
        new Promise((resolve) => {
          const id = (last += 1);
          asks.push(key);
          waiting.set(id, resolve);
          queueMicrotask(() => credits.received(worker, { type: 'rate-credit', id, store, key, limit: max }));
        }),
      onReclaim: (handler) => {
        release = handler;
      },
    };
    const { store } = createCreditRateLimit(channel, now);
    void store.init?.({ limit, windowMs: 60_000 } as Parameters<NonNullable<typeof store.init>>[0]);
    return store;
  });
  const hit = async (worker: number) => (await stores[worker]!.increment('caller')).totalHits;
  return { hit, asks };
}

describe('rate-limit credits from the supervisor', () => {
  it('when a worker asks, then it gets max(1, floor(left / (2 × workers))) of what is left, never past the limit', () => {
    expect([creditsFor(1000, 0, 3), creditsFor(1000, 166, 3), creditsFor(10, 0, 3), creditsFor(10, 9, 3), creditsFor(10, 10, 3), creditsFor(5, 7, 3)]).toEqual([166, 139, 1, 1, 0, 0]);
  });

  it('when three workers take turns with a limit of 100, then exactly 100 hits are under the limit in the window and the rest over it', async () => {
    const { hit } = machine(3, 100);

    const totals: number[] = [];
    for (let n = 0; n < 150; n += 1) totals.push(await hit(n % 3));

    expect(totals.filter((total) => total <= 100)).toHaveLength(100);
    expect(totals.slice(100).every((total) => total > 100)).toBe(true);
  });

  it('when 150 hits come at once spread over three workers, then exactly 100 are under the limit', async () => {
    const { hit } = machine(3, 100);

    const totals = await Promise.all(Array.from({ length: 150 }, (_, n) => hit(n % 3)));

    expect(totals.filter((total) => total <= 100)).toHaveLength(100);
  });

  it('when one worker serves a key alone, then its counts are exact (1, 2, 3, …) and it asks far fewer times than it counts', async () => {
    const { hit, asks } = machine(4, 100);

    const totals: number[] = [];
    for (let n = 0; n < 101; n += 1) totals.push(await hit(0));

    expect(totals).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
    expect(asks.length).toBeLessThan(40);
  });

  it('when a worker that saw the key once holds unused credits, then the window, once spent elsewhere, takes them back: the limit is reached exactly', async () => {
    const { hit } = machine(2, 40);

    const first = await hit(0);
    const rest: number[] = [];
    for (let n = 0; n < 45; n += 1) rest.push(await hit(1));

    expect(first).toBe(1);
    expect(rest.filter((total) => total <= 40)).toHaveLength(39);
    expect(rest.slice(-7)).toEqual([40, 41, 42, 43, 44, 45, 46]);
  });

  it('when the window ends, then its credits end with it and the next hit starts a new window at 1', async () => {
    let now = 0;
    const { hit } = machine(2, 100, () => now);

    for (let n = 0; n < 100; n += 1) await hit(0);
    const spent = await hit(1);
    now = 60_000;
    const fresh = await hit(1);

    expect([spent, fresh]).toEqual([101, 1]);
  });
});
