import type { Request, RequestHandler } from 'express';
import { AppError } from '../errors';

// A closed-loop client (each connection waits for its answer before sending again) with this many connections
// or fewer is never overload, however slow the machine: its requests in progress never exceed it.
export const IN_FLIGHT_FLOOR = 64;

// RFC 9112 6.3: a request has a body when it says so, by Transfer-Encoding or by a Content-Length above 0.
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * The requests of one kind in progress, by arrival time in arrival order (a Map iterates in insertion order): the
 * first entries are the oldest. Keyed by a number of the request's own, not by its response: a long-lived Map
 * holding short-lived objects made the scavenges promote about a third of all a create allocates
 * (docs/decisions/performance.md). Below 2^30 a number stays a small integer, never an object.
 */
class Line {
  readonly inProgress = new Map<number, number>();

  constructor(private readonly maxWaitMs: number) {}

  queued(now: number): boolean {
    if (this.inProgress.size < IN_FLIGHT_FLOOR) return false;
    let seen = 0;
    for (const arrived of this.inProgress.values()) {
      if (now - arrived <= this.maxWaitMs) return false;
      seen += 1;
      if (seen === IN_FLIGHT_FLOOR) return true;
    }
    return false;
  }
}

// Reads wait for no write lock and no write's commit: a queue of writes (creates waiting for another process's
// SQLite lock, a busy PostgreSQL) must not shed reads the service would answer at once, nor reads writes.
const isRead = (req: Request): boolean => req.method === 'GET' || req.method === 'HEAD';

/**
 * Sheds on queueing: a new request gets a cheap 503 with Retry-After when IN_FLIGHT_FLOOR or more other requests
 * of its kind (reads, or writes) are in progress and the IN_FLIGHT_FLOOR oldest of them have each waited longer
 * than maxWaitMs. That is a queue: many requests, each waiting long. Neither alone is: 64 slow requests of a closed
 * loop on a slow machine wait long but are not a queue the service can shorten, and 1,000 requests read in one
 * event-loop turn and answered within it are a batch, not a wait. Reads and writes are two lines: writes waiting
 * for the store's write lock are a queue of writes, while a read meanwhile is answered at once; a loop too busy
 * to answer shows in both lines, as each one's requests age.
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
  const reads = new Line(maxWaitMs);
  const writes = new Line(maxWaitMs);
  let lastId = 0;
  return (req, res, next) => {
    const now = performance.now();
    const line = isRead(req) ? reads : writes;
    // Retry-After: the error middleware gives every 503 one.
    if (line.queued(now)) throw new AppError('overloaded');
    // A stream that stays open while its client reads (the change feed) is shed when it asks, like any request,
    // but never counted as waiting afterwards: 64 open streams would otherwise look like a queue and shed all.
    if (longLived(req)) {
      next();
      return;
    }
    // Wraps at 2^30: no request stays in progress while a billion others arrive.
    lastId = (lastId + 1) & 0x3fffffff;
    const id = lastId;
    const { inProgress } = line;
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
