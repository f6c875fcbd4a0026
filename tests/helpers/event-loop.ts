/** Holds this process's event loop (which an in-process test app shares) for ms: the lag the app sees. */
export function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: nothing else runs
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sustained overload: the loop is held for holdMs at a time, with only a timer turn between, until stop() is
 * called. One long stall is not overload; shedding waits for several late samples in a row.
 */
export function sustainedOverload(holdMs: number): { stop: () => void } {
  let running = true;
  const hold = () => {
    if (!running) return;
    busy(holdMs);
    setTimeout(hold, 0);
  };
  setTimeout(hold, 0);
  return {
    stop: () => {
      running = false;
    },
  };
}
