import { repeatWithoutOverlap } from '../../src/lifecycle';
import { sleep } from '../helpers/common';

const EVERY_MS = 20;

describe('background rounds (repeatWithoutOverlap)', () => {
  it('when a round takes longer than the interval, then the ticks meanwhile are skipped and never two rounds run at once', async () => {
    let running = 0;
    let most = 0;
    let rounds = 0;
    const stop = repeatWithoutOverlap(EVERY_MS, async () => {
      running += 1;
      most = Math.max(most, running);
      await sleep(EVERY_MS * 4);
      running -= 1;
      rounds += 1;
    });

    // Three rounds span a dozen ticks at least, each of them finding a round running or starting the next.
    for (const until = performance.now() + 5000; rounds < 3 && performance.now() < until; ) await sleep(EVERY_MS);
    stop();

    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
  });

  it('when started with now and then stopped mid-round, then the first round ran at once, sees stopped, and none follows', async () => {
    const seen: boolean[] = [];
    let started = 0;
    const stop = repeatWithoutOverlap(
      EVERY_MS,
      async (stopped) => {
        started += 1;
        await sleep(EVERY_MS / 2);
        seen.push(stopped());
      },
      { now: true },
    );

    expect(started).toBe(1);
    stop();
    await sleep(EVERY_MS * 5);

    expect(started).toBe(1);
    expect(seen).toEqual([true]);
  });
});
