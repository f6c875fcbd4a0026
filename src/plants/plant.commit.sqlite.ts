/**
 * The group commit's transaction on SQLite: one batch of writes in arrival order, one BEGIN IMMEDIATE and one
 * fsync (synchronous=FULL), each write in its savepoint with its change event, its webhook rows and, sent with
 * Idempotency-Key, its kept answer. Runs on the write connection: the writer thread's (src/writer.thread.ts) or,
 * for a store with no file of its own (`:memory:`), the repository's. Synchronous, SQL only; the link, the retry on
 * a locked file and the answers to callers are the repository's (plant.repository.sqlite.ts).
 */
import type { ChangeOutbox } from '../change-outbox';
import type { Db } from '../db/database.sqlite';
import { isStoreFault } from '../db/health.sqlite';
import { AppError } from '../errors';
import type { TenantKey } from '../tenant';
import { SqliteEventLog } from './plant.events.sqlite';
import { IdempotencyKeyTaken, keepAnswerSqlite } from './plant.idempotency-keys';
import type { BatchOutcome, KeepAnswer, WriteOutcome } from './plant.repository';
import { sqliteChangeApplier, type ChangeWrite } from './plant.write.sqlite';
import { failed, type PlantWrite } from './plant.write-rule';

/** A batch's writes, applied all or nothing inside the group commit that holds them. */
export type WriteUnit = { tenant: TenantKey; writes: readonly PlantWrite[]; trace?: ChangeWrite['trace']; keep?: KeepAnswer };
/** A write and, sent with Idempotency-Key, its answer to keep in the same savepoint. */
export type Op = (ChangeWrite & { tenant: TenantKey; keep?: KeepAnswer }) | WriteUnit;
export type Outcome = WriteOutcome | BatchOutcome;

/** What one commit answers: each op's outcome or its own error, and whether any event was written. */
export type Committed = { outcomes: (Outcome | Error)[]; wrote: boolean };

/** Throws the whole batch's fault, or answers every op's outcome; the transaction is committed when it returns. */
export type CommitBatch = (ops: readonly Op[]) => Committed;

/** Thrown inside a unit's savepoint to undo it: the first write that failed. */
class UnitFailed extends Error {
  constructor(readonly outcome: Extract<BatchOutcome, { outcome: 'failed' }>) {
    super('a batch write failed');
  }
}

export function translate(error: unknown): Error {
  // Matched by name and code, not instanceof: the native addon keeps the SqliteError class of the first
  // module instance that loaded it, so a second one (a jest registry) would never match.
  if (isStoreFault(error)) {
    return new AppError('store_unavailable', undefined, { cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Prepares the commit on `db` (migrated), once. Positions are read under the write lock at the start of each batch
 * (an import may have written events since) and put back when a write rolls back.
 */
export function sqlitePlantCommit(db: Db, outbox?: ChangeOutbox): CommitBatch {
  const events = new SqliteEventLog(db);
  const positions = { last: events.lastWritten() };
  // A nested transaction is a savepoint: a write that throws takes its event (and its position) back with it.
  const apply = sqliteChangeApplier(db, events, positions, outbox);
  const keys = keepAnswerSqlite(db);
  // A keyed write's answer is kept in its savepoint: a row that cannot be written takes the write back with it.
  const applyOne = db.transaction((write: ChangeWrite & { tenant: TenantKey; keep?: KeepAnswer }, at: number) => {
    const outcome = apply(write, write.tenant, at);
    if (write.keep !== undefined) keys.keep(write.tenant, write.keep, outcome);
    return outcome;
  });
  // A batch is one savepoint: its first failed write throws, which undoes its earlier writes, events and webhook rows.
  const applyUnit = db.transaction((unit: WriteUnit, at: number): BatchOutcome => {
    const results: WriteOutcome[] = [];
    for (const [index, write] of unit.writes.entries()) {
      const result = apply(unit.trace === undefined ? write : { ...write, trace: unit.trace }, unit.tenant, at);
      if (failed(result.outcome)) throw new UnitFailed({ outcome: 'failed', index, result });
      results.push(result);
    }
    const outcome: BatchOutcome = { outcome: 'applied', results };
    if (unit.keep !== undefined) keys.keep(unit.tenant, unit.keep, outcome);
    return outcome;
  });
  const commitBatch = db.transaction((ops: readonly Op[]): Committed => {
    // Read again under the write lock: `plant-store import` numbers the events it writes after the same record.
    positions.last = events.lastWritten();
    const first = positions.last;
    const at = Date.now();
    const outcomes = ops.map((op) => {
      // Another process on the file committed this key since this one looked: its write is not applied again.
      if (op.keep !== undefined && keys.taken(op.tenant, op.keep)) return new IdempotencyKeyTaken();
      const before = positions.last;
      try {
        return 'writes' in op ? applyUnit(op, at) : applyOne(op, at);
      } catch (error) {
        positions.last = before;
        if (error instanceof UnitFailed) return error.outcome;
        const translated = translate(error);
        // A store that cannot take writes fails the whole batch: rethrown, the transaction rolls back.
        if (translated instanceof AppError) throw error;
        return translated;
      }
    });
    return { outcomes, wrote: positions.last !== first };
  });
  return (ops) => commitBatch.immediate(ops);
}
