/**
 * Group commit, whatever the store and the operation: the writes submitted in one event-loop turn go to `commit`
 * together, in arrival order, so they share one transaction (one fsync, one round trip). `commit` settles every
 * write of its batch, each after the commit that holds it, or hands the batch back with `retry`. Knows nothing of
 * SQL or of what is written.
 */

/** One submitted write and how its caller is answered. */
export type Queued<Op, Outcome> = { op: Op; resolve: (outcome: Outcome) => void; reject: (error: Error) => void };

export class GroupCommit<Op, Outcome> {
  private pending: Queued<Op, Outcome>[] = [];

  constructor(private readonly commit: (batch: Queued<Op, Outcome>[]) => void) {}

  /** Resolves with the write's outcome once the commit that holds it is durable. */
  submit(op: Op): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ op, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  /** Puts a batch that could not commit now back in front of the queue, committed again after `delayMs`. */
  retry(batch: Queued<Op, Outcome>[], delayMs: number): void {
    this.pending = batch.concat(this.pending);
    setTimeout(this.flush, delayMs);
  }

  private readonly flush = (): void => {
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) this.commit(batch);
  };
}
