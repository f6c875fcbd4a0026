/**
 * The feed's wake-ups across the workers of one machine on SQLite (docs/decisions/workers.md, D11): each local commit
 * that wrote events is told to the other workers, and their commits wake this worker's listeners as its own do.
 * Events take their positions under the one write lock, so once a notice arrives a read from the store sees every
 * event up to it: the feed reads in position order, as for a local commit.
 */
import type { MachineCommits } from '../resource';
import type { ChangeSignal } from './plant.events';

/** `local` as it is with no other worker; else each local commit told, and each one heard a wake-up. */
export function acrossWorkers(local: ChangeSignal, commits: MachineCommits | undefined): ChangeSignal {
  if (commits === undefined) return local;
  local((events) => commits.tell(events ?? 1));
  return (wake) => {
    const stopLocal = local(wake);
    const stopHeard = commits.hear(wake);
    return () => {
      stopLocal();
      stopHeard();
    };
  };
}
