/**
 * PostgreSQL's keyed group commits that one statement cannot settle (plant.repository.postgres.ts sends the rest
 * as one statement that stores their answers itself): a transaction that takes the feed's counter, claims the
 * keys (each in its write's tenant), applies the writes whose keys were free and stores their answers.
 */
import type { PgPool } from '../db/database.postgres';
import type { ChangeOutboxRows } from '../change-outbox';
import { IdempotencyKeyTaken } from './plant.idempotency-keys';
import { claimKeysPostgres, finishKeysPostgres, slotOf } from './plant.idempotency-keys.postgres';
import { applyWrites, outcomeOf, type Applied, type AppliedBatch, type AppliedUnit, type BatchWrite } from './plant.write.postgres';

/** Each entry's outcome, in order, or the key another request holds; how many plants changed. */
export type Settled = { applied: (Applied | AppliedUnit | IdempotencyKeyTaken)[]; changed: number };

/** Whether two keyed entries of a batch carry one caller's key in one tenant: its statement could store only one of them. */
export function repeatsKey(batch: readonly BatchWrite[]): boolean {
  const slots = batch.flatMap(({ tenant, keep }) => (keep === undefined ? [] : [slotOf(tenant, keep)]));
  return new Set(slots).size < slots.length;
}

/**
 * The batch's outcomes in its order: each entry `takenOf` answers, that IdempotencyKeyTaken; the others, the
 * outcomes of the writes applied without them, in turn.
 */
export function inBatchOrder(
  batch: readonly BatchWrite[],
  takenOf: (entry: BatchWrite, index: number) => IdempotencyKeyTaken | undefined,
  applied: Settled['applied'],
): Settled['applied'] {
  const results = applied.values();
  return batch.map((entry, index) => takenOf(entry, index) ?? (results.next().value as Settled['applied'][number]));
}

/**
 * A keyed batch that one statement could not settle, as a transaction on one connection: the feed's counter taken
 * first (the order every keyed statement takes it and then its keys, so the two never wait on each other in a
 * cycle), the keys claimed, then the writes whose keys were free, their answers (rendered once the write's
 * positions are known), COMMIT. A write whose key is taken is answered IdempotencyKeyTaken while the rest of the batch
 * commits (docs/decisions/api.md).
 */
export async function claimingTransaction(pool: PgPool, batch: readonly BatchWrite[], outbox: ChangeOutboxRows | undefined): Promise<Settled> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query({ name: 'plant_counter_take', text: 'SELECT last_pos FROM plant_event_counter FOR UPDATE' });
    const keyed = batch.flatMap((entry, index) => (entry.keep === undefined ? [] : [{ tenant: entry.tenant, keep: entry.keep, index }]));
    const taken = new Set([...(await claimKeysPostgres(client, keyed))].map((at) => (keyed[at] as { index: number }).index));
    const open = batch.filter((_, index) => !taken.has(index));
    const done: AppliedBatch = open.length === 0 ? { applied: [], changed: 0 } : await applyWrites(client, open, Date.now(), outbox);
    const applied = inBatchOrder(batch, (_, index) => (taken.has(index) ? new IdempotencyKeyTaken() : undefined), done.applied);
    const kept = batch.flatMap((entry, index) => {
      const result = applied[index];
      if (entry.keep === undefined || result === undefined || result instanceof IdempotencyKeyTaken) return [];
      return [{ tenant: entry.tenant, keep: entry.keep, outcome: outcomeOf(entry, result) }];
    });
    if (kept.length > 0) await finishKeysPostgres(client, kept);
    await client.query('COMMIT');
    return { applied, changed: done.changed };
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: unknown) => {
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
