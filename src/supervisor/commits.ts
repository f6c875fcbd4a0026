/**
 * The supervisor's side of commit notices and the leader (docs/decisions/workers.md, D9 and D11). A worker's commit
 * notice goes on to every other live worker, so their feeds and the leader's webhook dispatcher wake at once; it is
 * a few bytes per group commit, not per write. The leader is the lowest live slot, named once it listens when there
 * is none (slot 1 at start, the next live slot after the leader exits) and kept until it exits: a restarted
 * slot 1 does not take the lead back, so what the leader runs (SQLite's webhook dispatcher, scheduled backups) starts
 * once per leader's life and never stops in a live worker.
 */
import type { Worker } from 'node:cluster';
import type { CommitNotice, LeaderNotice } from './commit-messages';

type Slot = { worker?: Worker; listened: boolean };

/** Sends `notice` from `from` to every other live worker; one whose channel is closing is exiting and needs none. */
export function relayCommit(from: Worker, notice: CommitNotice, live: readonly Worker[]): void {
  for (const worker of live) if (worker !== from && worker.isConnected()) worker.send(notice, () => undefined);
}

export class Leadership {
  private leader: Worker | undefined;

  /** `stopping`: the supervisor drains; no leader is named then, the draining workers stop what they run. */
  constructor(private readonly stopping: () => boolean) {}

  /** A slot listened or a worker exited (`slots` in slot order): names a leader when there is none. */
  elect(slots: readonly Slot[]): void {
    if (this.leader !== undefined || this.stopping()) return;
    // The lowest live slot, once it listens (its listening calls this again); one dying now calls it on its exit.
    const lowest = slots.find((slot) => slot.worker !== undefined);
    const next = lowest?.worker;
    if (next === undefined || !lowest?.listened || !next.isConnected()) return;
    this.leader = next;
    const notice: LeaderNotice = { type: 'leader' };
    next.send(notice, () => undefined);
  }

  /** A worker exited (its slot already empty): when it led, the next live slot that listens leads. */
  exited(worker: Worker, slots: readonly Slot[]): void {
    if (worker === this.leader) this.leader = undefined;
    this.elect(slots);
  }
}
