import { optional, Parts, type Part } from '../../src/lifecycle';

/** A part that writes what happens to it into `events`; `fails` makes its start reject. */
function recorded(events: string[], name: string, fails = false): Part<string> {
  return {
    name,
    start: async () => {
      await Promise.resolve();
      if (fails) throw new Error(`${name} cannot start`);
      events.push(`start ${name}`);
      return `${name}'s handle`;
    },
    stop: async (_deadline, handle) => {
      await Promise.resolve();
      events.push(`stop ${handle}`);
    },
  };
}

const failures = (into: string[]) => (part: string, err: unknown) => into.push(`${part}: ${(err as Error).message}`);

describe('the service parts (Parts)', () => {
  it('when parts start and are stopped, then each starts in order and stops in reverse, given what its start returned', async () => {
    const events: string[] = [];
    const parts = new Parts(failures(events));

    const handles = [await parts.start(recorded(events, 'a')), await parts.start(recorded(events, 'b')), await parts.start(recorded(events, 'c'))];
    await parts.stop(Date.now() + 1000);

    expect(handles).toEqual(["a's handle", "b's handle", "c's handle"]);
    expect(events).toEqual(['start a', 'start b', 'start c', "stop c's handle", "stop b's handle", "stop a's handle"]);
  });

  it('when a start fails, then the parts started before it stop in reverse and the start rejects with its error', async () => {
    const events: string[] = [];
    const parts = new Parts(failures(events));
    await parts.start(recorded(events, 'a'));
    await parts.start(recorded(events, 'b'));

    const started = parts.start(recorded(events, 'c', true));

    await expect(started).rejects.toThrow('c cannot start');
    expect(events).toEqual(['start a', 'start b', "stop b's handle", "stop a's handle"]);
  });

  it('when a stop fails, then it is reported with the part name and the parts before it still stop', async () => {
    const events: string[] = [];
    const parts = new Parts(failures(events));
    await parts.start(recorded(events, 'a'));
    await parts.start({ name: 'b', start: () => undefined, stop: () => Promise.reject(new Error('b will not close')) });

    await parts.stop(Date.now());

    expect(events).toEqual(['start a', 'b: b will not close', "stop a's handle"]);
  });

  it('when parts are stopped, then every one gets the same deadline, and the drain is the stops, none cut short', async () => {
    const deadlines: number[] = [];
    const parts = new Parts(() => undefined);
    const slow: Part = { name: 'slow', start: () => undefined, stop: (deadline) => new Promise((resolve) => setTimeout(() => resolve(void deadlines.push(deadline)), 30)) };
    await parts.start(slow);
    await parts.start({ name: 'quick', start: () => undefined, stop: (deadline) => void deadlines.push(deadline) });
    const deadline = Date.now() + 10;

    const began = performance.now();
    await parts.stop(deadline);

    expect(deadlines).toEqual([deadline, deadline]);
    expect(performance.now() - began).toBeGreaterThanOrEqual(25);
  });

  it('when a group stops, then its parts stop at once, last first, and the parts before the group stop after all of them', async () => {
    const events: string[] = [];
    const parts = new Parts(failures(events));
    const slow = (name: string): Part => ({
      name,
      start: () => void events.push(`start ${name}`),
      stop: () => {
        events.push(`stopping ${name}`);
        return new Promise((resolve) => setTimeout(() => resolve(void events.push(`stopped ${name}`)), 20));
      },
    });
    await parts.start(recorded(events, 'store'));
    await parts.start(parts.together('background', [slow('feed'), slow('webhooks')]));

    await parts.stop(Date.now() + 1000);

    expect(events).toEqual(['start store', 'start feed', 'start webhooks', 'stopping webhooks', 'stopping feed', 'stopped webhooks', 'stopped feed', "stop store's handle"]);
  });

  it('when a part of a group fails to start, then the group members and the parts before the group stop in reverse', async () => {
    const events: string[] = [];
    const parts = new Parts(failures(events));
    await parts.start(recorded(events, 'store'));

    const started = parts.start(parts.together('background', [recorded(events, 'feed'), recorded(events, 'webhooks', true)]));

    await expect(started).rejects.toThrow('webhooks cannot start');
    expect(events).toEqual(['start store', 'start feed', "stop feed's handle", "stop store's handle"]);
  });

  it('when an optional part is off, then its builder is never called and it starts as nothing', async () => {
    const parts = new Parts(() => undefined);
    let built = 0;
    const build = (url: string): Part<string> => {
      built += 1;
      return { name: 'redis', start: () => url };
    };

    const off = await parts.start(optional(undefined, build));
    const on = await parts.start(optional('redis://here', build));

    expect({ off, on, built }).toEqual({ off: undefined, on: 'redis://here', built: 1 });
  });
});
