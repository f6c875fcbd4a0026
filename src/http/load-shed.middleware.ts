import type { Request, RequestHandler } from 'express';
import { AppError } from '../errors';

// A closed-loop client (each connection waits for its answer before sending again) with this many connections
// or fewer is never overload, however slow the machine: its requests in progress never exceed it.
export const IN_FLIGHT_FLOOR = 64;

// RFC 9112 6.3: a request has a body when it says so, by Transfer-Encoding or by a Content-Length above 0.
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * Sheds on queueing: a new request gets a cheap 503 with Retry-After when IN_FLIGHT_FLOOR or more other requests
 * are in progress and the IN_FLIGHT_FLOOR oldest of them have each waited longer than maxWaitMs. That is a
 * queue: many requests, each waiting long. Neither alone is: 64 slow requests of a closed loop on a slow machine
 * wait long but are not a queue the service can shorten, and 1,000 requests read in one event-loop turn and
 * answered within it are a batch, not a wait.
 *
 * Why it sees the kernel's queues: Node reads every readable connection (and accepts every pending one) in each
 * turn of the event loop, so a request waits in the kernel at most one turn; what a turn costs shows here as
 * the age of the requests read at its start when the later ones reach this check, and a store that answers
 * slowly shows as the age of those waiting for it. Requests past the check are answered in turns bounded by
 * maxWaitMs plus the cost of the 503s, so their wait is bounded whatever the offered load. The oldest
 * IN_FLIGHT_FLOOR, not the oldest one: a single request stuck on a slow peer is not overload.
 *
 * A request's wait starts when the service holds all of it: at this check for one without a body, once its body
 * has been read for one with a body. A client trickling its body a byte a second is slow, not queued; counted
 * from its headers, 64 of them would have every other request shed.
 */
export function loadShedding(maxWaitMs: number, longLived: (req: Request) => boolean = () => false): RequestHandler {
  // Arrival times in arrival order (a Map iterates in insertion order): the first entries are the oldest in
  // progress. Keyed by a number of the request's own, not by its response: a long-lived Map holding short-lived
  // objects made the scavenges promote about a third of all a create allocates (docs/decisions/performance.md).
  // Below 2^30 a number stays a small integer, never an object.
  const inProgress = new Map<number, number>();
  let lastId = 0;
  const queued = (now: number): boolean => {
    if (inProgress.size < IN_FLIGHT_FLOOR) return false;
    let seen = 0;
    for (const arrived of inProgress.values()) {
      if (now - arrived <= maxWaitMs) return false;
      seen += 1;
      if (seen === IN_FLIGHT_FLOOR) return true;
    }
    return false;
  };
  return (req, res, next) => {
    const now = performance.now();
    // Retry-After: the error middleware gives every 503 one.
    if (queued(now)) throw new AppError('overloaded');
    // A stream that stays open while its client reads (the change feed) is shed when it asks, like any request,
    // but never counted as waiting afterwards: 64 open streams would otherwise look like a queue and shed all.
    if (longLived(req)) {
      next();
      return;
    }
    // Wraps at 2^30: no request stays in progress while a billion others arrive.
    lastId = (lastId + 1) & 0x3fffffff;
    const id = lastId;
    res.on('close', () => inProgress.delete(id));
    // A body still on its way is the client's time, not the service's: the request counts from the moment the
    // service has read the whole of it. One answered without reading its body (401, 415) never counts, and one
    // whose body ends after its answer must not enter the table, where nothing would remove it.
    if (hasBody(req)) {
      req.once('end', () => {
        if (!res.writableEnded && !res.destroyed) inProgress.set(id, performance.now());
      });
    } else inProgress.set(id, now);
    next();
  };
}
