import { createCreditRateLimit, type AskCredits } from '../../src/http/rate-limit.credits';
import { creditsFor, RateCredits } from '../../src/supervisor/rate-credits';

// Each worker's store asks the one supervisor's windows directly, as the IPC channel would carry it.
function workersOver(credits: RateCredits, count: number, now: () => number = Date.now) {
  const asks: string[] = [];
  const ask: AskCredits = (store, key, limit) => {
    asks.push(key);
    return Promise.resolve(credits.grant({ store, key, limit }));
  };
  const stores = Array.from({ length: count }, () => createCreditRateLimit(ask, now).store);
  for (const store of stores) void store.init?.({ limit: 100, windowMs: 60_000 } as Parameters<NonNullable<typeof store.init>>[0]);
  return { stores, asks };
}

describe('rate-limit credits from the supervisor', () => {
  it('when a worker asks, then it gets max(1, floor(left / (2 × workers))) of what is left, never past the limit', () => {
    expect([creditsFor(1000, 0, 3), creditsFor(1000, 166, 3), creditsFor(10, 0, 3), creditsFor(10, 9, 3), creditsFor(10, 10, 3), creditsFor(5, 7, 3)]).toEqual([166, 139, 1, 1, 0, 0]);
  });

  it('when three workers take turns with a limit of 100, then exactly 100 hits are under the limit in the window and the rest over it', async () => {
    const { stores } = workersOver(new RateCredits(3), 3);

    const totals: number[] = [];
    for (let hit = 0; hit < 150; hit += 1) totals.push((await stores[hit % 3]!.increment('caller')).totalHits);

    expect(totals.filter((total) => total <= 100)).toHaveLength(100);
    expect(totals.slice(100).every((total) => total > 100)).toBe(true);
  });

  it('when one worker serves a key alone, then its counts are exact (1, 2, 3, …) and it asks far fewer times than it counts', async () => {
    const { stores, asks } = workersOver(new RateCredits(4), 4);

    const totals: number[] = [];
    for (let hit = 0; hit < 101; hit += 1) totals.push((await stores[0]!.increment('caller')).totalHits);

    expect(totals).toEqual(Array.from({ length: 101 }, (_, i) => i + 1));
    expect(asks.length).toBeLessThan(40);
  });

  it('when the window ends, then its credits end with it and the next hit starts a new window at 1', async () => {
    let now = 0;
    const { stores } = workersOver(new RateCredits(2, () => now), 2, () => now);

    for (let hit = 0; hit < 100; hit += 1) await stores[0]!.increment('caller');
    const spent = await stores[1]!.increment('caller');
    now = 60_000;
    const fresh = await stores[1]!.increment('caller');

    expect([spent.totalHits, fresh.totalHits, fresh.resetTime]).toEqual([101, 1, new Date(120_000)]);
  });
});
