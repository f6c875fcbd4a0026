/**
 * Group commit, whatever the store and the operation: the writes submitted in one event-loop turn go to `commit`
 * together, in arrival order, so they share one transaction (one fsync, one round trip). `commit` settles every
 * write of its batch, each after the commit that holds it, or hands the batch back with `retry`. Knows nothing of
 * SQL or of what is written.
 */

/** One submitted write and how its caller is answered. */
export type Queued<Op, Outcome> = { op: Op; resolve: (outcome: Outcome) => void; reject: (error: Error) => void };

/**
 * The machine's write turn (SQLite at WORKERS above 1, held by the supervisor): `take` resolves once this process
 * may commit, with the function that gives the turn back. A scheduler only: the file's write lock still decides,
 * so a turn granted without a supervisor (draining) or after its wait ran out costs lock retries, never a write.
 */
export type WriteTurn = { take: () => Promise<() => void> };

export class GroupCommit<Op, Outcome> {
  private pending: Queued<Op, Outcome>[] = [];
  // With a turn: a take is in flight or held (writes arriving meanwhile join the next batch), or a retry waits.
  private asking = false;
  private retrying = false;

  constructor(
    private readonly commit: (batch: Queued<Op, Outcome>[]) => void,
    private readonly turn?: WriteTurn,
  ) {}

  /** Resolves with the write's outcome once the commit that holds it is durable. */
  submit(op: Op): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ op, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  /**
   * Resolves once no write is queued, waiting for its turn or for a lock retry: each has then been answered, so
   * the drain may close the connection (a retry firing on a closed one would fail a write that could commit).
   * Bounded by the busy timeout, after which a queued write fails with 503.
   */
  async settled(): Promise<void> {
    while (this.pending.length > 0 || this.asking || this.retrying) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Puts a batch that could not commit now back in front of the queue, committed again after `delayMs`. */
  retry(batch: Queued<Op, Outcome>[], delayMs: number): void {
    this.pending = batch.concat(this.pending);
    this.retrying = true;
    setTimeout(() => {
      this.retrying = false;
      this.flush();
    }, delayMs);
  }

  private readonly flush = (): void => {
    if (this.turn !== undefined) {
      this.flushInTurn(this.turn);
      return;
    }
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) this.commit(batch);
  };

  // One turn per batch, not per write: everything that arrived while the turn was asked for commits together.
  private flushInTurn(turn: WriteTurn): void {
    if (this.asking || this.pending.length === 0) return;
    this.asking = true;
    void turn.take().then((give) => {
      const batch = this.pending;
      this.pending = [];
      try {
        if (batch.length > 0) this.commit(batch);
      } finally {
        give();
        this.asking = false;
      }
      if (!this.retrying && this.pending.length > 0) setImmediate(this.flush);
    });
  }
}
