import type { RequestHandler } from 'express';
import { AppError } from '../errors';

/**
 * Measures how late a repeating timer fires: when the event loop is that busy, every request waits as long
 * in line before its first byte is read. Past maxLagMs new requests get a cheap 503 with Retry-After
 * instead of joining the line, so the ones admitted keep a bounded latency and memory stays flat.
 * Shedding lasts as long as the lag that started it: the line built up in that time needs as long to clear.
 */
export function loadShedding(maxLagMs: number, sampleMs = 20): RequestHandler {
  let shedUntil = 0;
  let expected = performance.now() + sampleMs;
  setInterval(() => {
    const now = performance.now();
    const lagMs = now - expected;
    if (lagMs > maxLagMs) shedUntil = now + lagMs;
    expected = now + sampleMs;
  }, sampleMs).unref();
  return (_req, _res, next) => {
    if (performance.now() < shedUntil) {
      // Retry-After: the error middleware gives every 503 one.
      throw new AppError('overloaded');
    }
    next();
  };
}
