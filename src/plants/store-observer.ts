/**
 * What a store reports about its own work, for whoever watches (src/metrics). Called on the commit path, so an
 * implementation must be synchronous and cheap, and must never throw.
 */
export type StoreObserver = {
  /** A group commit finished: how many rows it held and how long the transaction with its fsync took. */
  committed(rows: number, seconds: number): void;
  /** A commit failed as a whole (locked, full or read-only store, or a bug); the driver's own error. */
  failed(error: unknown): void;
};

export const ignoreStore: StoreObserver = { committed: () => undefined, failed: () => undefined };
