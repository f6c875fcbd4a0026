/**
 * Attempt outcomes waiting to be written (src/webhooks/dispatcher.ts): one transaction per batch, not one per
 * delivery. Until written, their events stay held and are not attempted again; a batch the outbox cannot take is
 * kept for the next flush.
 */
import type { Logger } from '../logger';
import type { OutboxStore, Settlement } from './outbox';

// Outcomes written at once past this many: until written their events stay held, and a claim reads past them.
const SETTLE_BATCH = 64;

export class Settlements {
  private pending: Settlement[] = [];
  private settling: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<OutboxStore, 'settle'>,
    private readonly logger: Logger,
  ) {}

  add(settlement: Settlement): void {
    this.pending.push(settlement);
  }

  /** Enough outcomes wait to be written at once, without waiting for the periodic flush. */
  get full(): boolean {
    return this.pending.length >= SETTLE_BATCH;
  }

  /** Writes what waits, after any write already under way. */
  flush(): Promise<void> {
    this.settling = this.settling.then(async () => {
      if (this.pending.length === 0) return;
      const batch = this.pending;
      this.pending = [];
      try {
        await this.store.settle(batch);
      } catch (err) {
        // Kept for the next flush; until written, the events stay held and are not attempted again.
        this.pending = [...batch, ...this.pending];
        this.logger.error({ err, events: batch.length }, 'webhook outbox: cannot record attempt outcomes; will try again');
      }
    });
    return this.settling;
  }
}
