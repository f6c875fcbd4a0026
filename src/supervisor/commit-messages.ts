/** What a worker and its supervisor say about commits and the leader (src/supervisor/commits.ts) over the cluster's IPC. Types only. */

/** Worker → supervisor, and supervisor → every other worker: a commit wrote `events` change events to the store. */
export type CommitNotice = { type: 'commit'; events: number };

/** Supervisor → worker: it leads now (D9); it stays leader until it exits. */
export type LeaderNotice = { type: 'leader' };

const typed = (message: unknown, type: string): boolean =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

export const isCommitNotice = (message: unknown): message is CommitNotice => typed(message, 'commit');

export const isLeaderNotice = (message: unknown): message is LeaderNotice => typed(message, 'leader');
