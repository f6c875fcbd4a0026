import type { RequestHandler } from 'express';
import { AppError } from '../errors';

// Late samples in a row before shedding starts: one late sample is a stop (a GC pause, a SIGSTOP, a burst of
// accepts) that is already over when it is seen; overload keeps every sample late.
const LATE_IN_A_ROW = 3;

/**
 * Measures how late a repeating timer fires: when the event loop is that busy, every request waits as long
 * in line before its first byte is read. While the loop has been more than maxLagMs late for several samples
 * in a row, new requests get a cheap 503 with Retry-After instead of joining the line, so the ones admitted
 * keep a bounded latency and memory stays flat. The first sample on time ends the shedding.
 */
export function loadShedding(maxLagMs: number, sampleMs = 20): RequestHandler {
  let lateInARow = 0;
  let expected = performance.now() + sampleMs;
  setInterval(() => {
    const now = performance.now();
    lateInARow = now - expected > maxLagMs ? lateInARow + 1 : 0;
    expected = now + sampleMs;
  }, sampleMs).unref();
  return (_req, _res, next) => {
    if (lateInARow >= LATE_IN_A_ROW) {
      // Retry-After: the error middleware gives every 503 one.
      throw new AppError('overloaded');
    }
    next();
  };
}
