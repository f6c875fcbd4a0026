/**
 * What the process knows of its own state, read by /readyz and the drain, and the service's parts: each started in
 * order, stopped in reverse. Ground floor: imports nothing, knows no subsystem.
 */

/** Resolves true when the store is readable and migrated, false when readable but behind; throws when unreadable. */
export type Readiness = () => Promise<boolean>;

/** Flipped once by the service's drain; /readyz answers 503 from then on. */
export type Lifecycle = { shuttingDown: boolean };

/** A start failure whose message already says what failed (the operator reads it as is). */
export class StartError extends Error {}

/**
 * One piece of the service with a lifetime: start resolves with what later parts use (a store, an address);
 * stop undoes it by the deadline (a Date.now() instant), given what start returned. A part that must not hold the
 * drain past the deadline bounds itself by it; the runner never cuts a stop short, so nothing closes under it.
 */
export type Part<T = void> = {
  name: string;
  start: () => Promise<T> | T;
  // A method, so a list of parts of several types is a list of Part<unknown>.
  stop?(this: void, deadline: number, started: T): Promise<void> | void;
};

/** A part when its setting is on, built by `load` only then (so a module it requires loads only then); else a no-op. */
export function optional<S, T>(setting: S | undefined | false, load: (setting: S) => Part<T>): Part<T | undefined> {
  if (setting === undefined || setting === false) return { name: 'off', start: () => undefined };
  const part = load(setting);
  return { name: part.name, start: part.start, stop: part.stop && ((deadline, started) => part.stop?.(deadline, started as T)) };
}

type Started = { name: string; stop: (deadline: number) => Promise<void> | void };

/**
 * The runner: starts parts one after another, remembering each; a failed start stops those already started, in
 * reverse, and rethrows; stop() undoes them all in reverse. A stop that fails is reported and the next goes on.
 */
export class Parts {
  private readonly started: Started[] = [];

  constructor(private readonly stopFailed: (part: string, err: unknown) => void) {}

  async start<T>(part: Part<T>): Promise<T> {
    let value: T;
    try {
      value = await part.start();
    } catch (err) {
      await this.stop(Date.now());
      throw err;
    }
    const stop = part.stop;
    if (stop !== undefined) this.started.push({ name: part.name, stop: (deadline) => stop(deadline, value) });
    return value;
  }

  /** Stops every started part, last first, each after the one started after it has stopped. */
  async stop(deadline: number): Promise<void> {
    for (let part = this.started.pop(); part !== undefined; part = this.started.pop()) await this.stopOne(part, deadline);
  }

  /**
   * Parts started in order and stopped all at once, as one part: work that waits for none of its siblings (the
   * background work), each stop given the whole of the deadline rather than what the ones before it left.
   */
  together(name: string, parts: readonly Part<unknown>[]): Part<Parts> {
    return {
      name,
      start: async () => {
        const group = new Parts(this.stopFailed);
        for (const part of parts) await group.start(part);
        return group;
      },
      stop: async (deadline, group) => {
        await Promise.all(group.started.splice(0).reverse().map((part) => group.stopOne(part, deadline)));
      },
    };
  }

  private async stopOne(part: Started, deadline: number): Promise<void> {
    try {
      await part.stop(deadline);
    } catch (err) {
      this.stopFailed(part.name, err);
    }
  }
}

/**
 * Runs `run` every `everyMs`, and at once when `now`, never two at a time: a tick that finds the last run still
 * going is skipped. The returned stop clears the timer and tells a run in progress, through `stopped()`, to end at
 * its next step. `run` reports its own failures (a rejection would be unhandled); the timer keeps no process alive.
 */
export function repeatWithoutOverlap(everyMs: number, run: (stopped: () => boolean) => Promise<unknown>, options: { now?: boolean } = {}): () => void {
  let stopped = false;
  let running = false;
  const tick = () => {
    if (running || stopped) return;
    running = true;
    void run(() => stopped).finally(() => {
      running = false;
    });
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  if (options.now === true) tick();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
