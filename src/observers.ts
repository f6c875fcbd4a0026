/**
 * What a resource's store and change feed report about their own work, for whoever watches (src/metrics). Called
 * on the commit and stream paths, so an implementation must be synchronous and cheap, and must never throw.
 * Ground floor: the resources implement the reporting, metrics the watching, and neither imports the other.
 */

export type StoreObserver = {
  /** A group commit finished: how many rows it held and how long the transaction with its fsync took. */
  committed(rows: number, seconds: number): void;
  /** A commit failed as a whole (locked, full or read-only store, or a bug); the driver's own error. */
  failed(error: unknown): void;
};

export const ignoreStore: StoreObserver = { committed: () => undefined, failed: () => undefined };

export type FeedObserver = {
  streams(open: number): void;
  sent(frames: number): void;
  cutOff(): void;
  /** Seconds from an event's commit to the feed reading it. */
  lag(seconds: number): void;
};
