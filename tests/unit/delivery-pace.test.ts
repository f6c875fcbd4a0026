import { DeliveryPace, FloorCredits } from '../../src/webhooks/pace';

const MAX = 64;
// The event loop's mean delay in ms over a window: requests waiting for it, or not.
const saturated = () => 50;

/** A subscriber that answers every attempt within the window it was started in. */
function runWindows(pace: DeliveryPace, credits: FloorCredits, windows: number, createsPerWindow: number): number {
  let started = 0;
  for (let window = 0; window < windows; window += 1) {
    let inFlight = 0;
    for (let create = 0; create < createsPerWindow; create += 1) {
      pace.recorded(1);
      credits.grant(1);
      const room = credits.room(pace.limit, inFlight);
      credits.spend(pace.limit, inFlight, room);
      inFlight += room;
      started += room;
    }
    pace.sample();
  }
  return started;
}

describe('webhook delivery pace', () => {
  it('when creates keep the event loop saturated, then the limit halves each window down to one attempt at a time', () => {
    const pace = new DeliveryPace(MAX, saturated);

    const limits = Array.from({ length: 8 }, () => {
      pace.recorded(50);
      pace.sample();
      return pace.limit;
    });

    expect(limits).toEqual([32, 16, 8, 4, 2, 1, 1, 1]);
  });

  it('when the loop has slack again, or no create comes while it is late (a backlog draining), then the limit doubles back to WEBHOOK_CONNECTIONS', () => {
    let delayMs = 50;
    const pace = new DeliveryPace(MAX, () => delayMs);
    for (let window = 0; window < 8; window += 1) {
      pace.recorded(50);
      pace.sample();
    }

    delayMs = 1;
    pace.recorded(50);
    pace.sample();
    const withSlack = pace.limit;
    delayMs = 50;
    const draining = Array.from({ length: 6 }, () => {
      pace.sample();
      return pace.limit;
    });

    expect({ withSlack, draining }).toEqual({ withSlack: 2, draining: [4, 8, 16, 32, 64, 64] });
  });

  it('when the loop is late but not saturated, then the limit holds', () => {
    const pace = new DeliveryPace(MAX, saturated);
    pace.recorded(1);
    pace.sample();
    const held = new DeliveryPace(MAX, () => 8);

    held.recorded(10);
    held.sample();

    expect([pace.limit, held.limit]).toEqual([32, 64]);
  });

  it('when the loop stays saturated for a long overload, then at least one attempt goes out per ten creates', () => {
    const pace = new DeliveryPace(MAX, saturated);
    const credits = new FloorCredits(MAX);

    const started = runWindows(pace, credits, 50, 200);

    expect(pace.limit).toBe(1);
    expect(started).toBeGreaterThanOrEqual((50 * 200) / 10);
    // Past the first windows (the limit shrinking from 64) the floor is what goes out: one attempt within the
    // limit per window and one per ten creates.
    const steady = runWindows(pace, credits, 10, 200);
    expect(steady).toBe(10 * (1 + 200 / 10));
  });

  it('when the subscriber holds every connection, then credits stop at the pool size and are spent only past the limit', () => {
    const credits = new FloorCredits(4);

    credits.grant(1000);
    const full = credits.room(1, 0);
    credits.spend(1, 0, 1);
    const afterOneWithinLimit = credits.room(1, 1);
    credits.spend(1, 1, 3);
    const afterThreePast = credits.room(1, 4);

    expect({ full, afterOneWithinLimit, afterThreePast }).toEqual({ full: 4, afterOneWithinLimit: 3, afterThreePast: 0 });
  });
});
