import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../logger';
import type { OutboxStore } from './outbox';

/** How often settled events past their retention are looked for. */
export const PRUNE_EVERY_MS = 3_600_000;

/**
 * Deletes delivered and failed events settled more than `retentionHours` ago, a slice at a time with a turn of
 * the event loop between slices, so a large backlog of old rows never holds up creates. Stops early when
 * `stopping()` says so; a failure is logged and the next round tries again.
 */
export async function pruneOutbox(store: OutboxStore, now: number, retentionHours: number, logger: Logger, stopping: () => boolean): Promise<void> {
  const before = now - retentionHours * 3_600_000;
  let total = 0;
  try {
    for (let deleted = await store.prune(before); deleted > 0 && !stopping(); deleted = await store.prune(before)) {
      total += deleted;
      await nextTurn();
    }
  } catch (err) {
    logger.error({ err }, 'webhook outbox: cannot prune');
  }
  if (total > 0) logger.info({ deleted: total, retentionHours }, 'webhook outbox pruned');
}
