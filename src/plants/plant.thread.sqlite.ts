/**
 * The plant group commit across the writer thread (src/writer.thread.ts), both ends of its wire format: the
 * request thread encodes a batch (`wireOps`: a kept answer becomes a reference, its render stays here) and decodes
 * the reply (`settle`); the thread runs it (`threadCommit`) through plant.commit.sqlite.ts, the same commit a store
 * without a file runs in process. Errors travel as data: a taken key, or a bug with its message and stack.
 */
import type { ChangeEntry, ChangeOutbox } from '../change-outbox';
import type { Db } from '../db/database.sqlite';
import { errorOfFault, faultOf, type WriterFault, type WriterModule } from '../db/sqlite-writer';
import { sqlitePlantCommit, type Op, type Outcome } from './plant.commit.sqlite';
import { IdempotencyKeyTaken } from './plant.idempotency-keys';
import type { KeepAnswer, RenderedAnswer } from './plant.repository';

/** A kept answer as the thread sees it: the key and, for its render, the request thread's reference. */
type WireKeep = Omit<KeepAnswer, 'render' | 'kept'> & { ref: number };
type WireOp = Omit<Op, 'keep'> & { keep?: WireKeep };
export type ThreadRequest = { ops: WireOp[]; pageCap: number };

type WireOutcome = { outcome: Outcome } | { taken: true } | { bug: WriterFault };
export type ThreadResult = { outcomes: WireOutcome[]; wrote: boolean; recorded: number; kept: number[] };

/** The batch as sent: each kept answer registered in `keeps` under the reference it travels as. */
export function wireOps(ops: readonly Op[], keeps: Map<number, KeepAnswer>): WireOp[] {
  return ops.map((op) => {
    if (op.keep === undefined) return op as WireOp;
    const { render: _render, kept: _kept, ...key } = op.keep;
    const ref = keeps.size + 1;
    keeps.set(ref, op.keep);
    return { ...op, keep: { ...key, ref } };
  });
}

/** Each op's outcome or error, as the repository answers its caller; the kept answers marked kept. */
export function settle(result: ThreadResult, keeps: ReadonlyMap<number, KeepAnswer>): (Outcome | Error)[] {
  for (const ref of result.kept) {
    const keep = keeps.get(ref);
    if (keep !== undefined) keep.kept = true;
  }
  return result.outcomes.map((wire) => ('outcome' in wire ? wire.outcome : 'taken' in wire ? new IdempotencyKeyTaken() : errorOfFault(wire.bug)));
}

/** The thread's side: prepared once on the write connection, then one call per posted batch. */
export const threadCommit: WriterModule['threadCommit'] = (db: Db, outbox: ChangeOutbox | undefined, render: (ref: number, outcome: unknown) => unknown) => {
  let recorded = 0;
  const counted: ChangeOutbox | undefined =
    outbox === undefined
      ? undefined
      : {
          record: (entry: ChangeEntry) => {
            outbox.record(entry);
            recorded += 1;
          },
        };
  const commit = sqlitePlantCommit(db, counted);
  let pageCap = 0;
  return (request) => {
    const { ops, pageCap: cap } = request as ThreadRequest;
    // The request connection's page cap holds for writes too (a cap set on the store's connection).
    if (cap !== pageCap) pageCap = Number(db.pragma(`max_page_count = ${cap}`, { simple: true }));
    recorded = 0;
    const kept: number[] = [];
    const local: Op[] = ops.map((op) => {
      if (op.keep === undefined) return op as Op;
      const { ref, ...key } = op.keep;
      const keep: KeepAnswer = { ...key, render: (outcome) => render(ref, outcome) as RenderedAnswer | undefined };
      Object.defineProperty(keep, 'kept', { set: () => kept.push(ref) });
      return { ...op, keep } as Op;
    });
    const { outcomes, wrote } = commit(local);
    const wire = outcomes.map((outcome): WireOutcome => {
      if (!(outcome instanceof Error)) return { outcome };
      return outcome instanceof IdempotencyKeyTaken ? { taken: true } : { bug: faultOf(outcome) };
    });
    const result: ThreadResult = { outcomes: wire, wrote, recorded, kept };
    return result;
  };
};
