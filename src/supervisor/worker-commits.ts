/**
 * A worker's side of commit notices and the leader (src/supervisor/commits.ts): the ports the service is given
 * (src/resource.ts MachineCommits and MachineLeader, matched by shape: this room does not load the service).
 */
import { isCommitNotice, isLeaderNotice, type CommitNotice } from './commit-messages';

export type WorkerCommits = { tell(events: number): void; hear(heard: (events: number) => void): () => void };
export type WorkerLeader = { whenLeading(lead: () => void): () => void };

// A notice at most this often per worker: commits closer together are told in one (their events summed), so under
// steady creates the supervisor relays a few hundred notices a second, not one per group commit; a commit after a
// quiet spell is told at once.
const NOTICE_EVERY_MS = 5;

export function workerCommits(): WorkerCommits {
  const hearers = new Set<(events: number) => void>();
  process.on('message', (message: unknown) => {
    if (isCommitNotice(message)) for (const heard of hearers) heard(message.events);
  });
  let untold = 0;
  let lastSent = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const send = () => {
    timer = undefined;
    lastSent = performance.now();
    const notice: CommitNotice = { type: 'commit', events: untold };
    untold = 0;
    // With no supervisor (draining, orphaned) there is no other worker to tell; their 5 s poll is the net.
    if (process.connected) process.send?.(notice, undefined, undefined, () => undefined);
  };
  return {
    tell: (events) => {
      untold += events;
      if (timer !== undefined) return;
      const wait = lastSent + NOTICE_EVERY_MS - performance.now();
      if (wait <= 0) send();
      else timer = setTimeout(send, wait).unref();
    },
    hear: (heard) => {
      hearers.add(heard);
      return () => hearers.delete(heard);
    },
  };
}

export function workerLeader(): WorkerLeader {
  let leading = false;
  const waiting = new Set<() => void>();
  process.on('message', (message: unknown) => {
    if (!isLeaderNotice(message) || leading) return;
    leading = true;
    for (const lead of waiting) lead();
    waiting.clear();
  });
  return {
    whenLeading: (lead) => {
      if (leading) {
        lead();
        return () => undefined;
      }
      waiting.add(lead);
      return () => waiting.delete(lead);
    },
  };
}
