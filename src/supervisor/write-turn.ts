/**
 * The machine's write turn on SQLite at WORKERS above 1 (docs/decisions/workers.md, "SQLite across workers"):
 * the supervisor hands it to one worker at a time, first come first served, so the workers' group commits take
 * the file's write lock in turn instead of polling it (a waiting worker's lock retries on timers lost it to
 * whoever committed back to back). A worker asks once per batch, commits, and gives it back; a worker that exits
 * gives back its turn and its place in the queue. A scheduler, not the lock: SQLite's own write lock still
 * decides, so nothing is lost if a turn is ever wrong.
 */
import type { Worker } from 'node:cluster';

/** Worker → supervisor: `take` asks for the turn, `give` gives it back or withdraws the ask `id` (no reply). */
export type WriteTurnAsk = { type: 'write-turn'; op: 'take' | 'give'; id: number };
/** Supervisor → worker: the turn is the ask `id`'s. */
export type WriteTurnGranted = { type: 'write-turn'; op: 'granted'; id: number };
export type WriteTurnMessage = WriteTurnAsk | WriteTurnGranted;

export function isWriteTurnMessage(message: unknown): message is WriteTurnMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'write-turn';
}

type Ask = { worker: Worker; id: number };

export class WriteTurnTable {
  private holder: Ask | undefined;
  private queue: Ask[] = [];

  received(worker: Worker, message: WriteTurnMessage): void {
    if (message.op === 'take') {
      this.queue.push({ worker, id: message.id });
    } else if (message.op === 'give') {
      if (this.holder?.worker === worker && this.holder.id === message.id) this.holder = undefined;
      // An ask withdrawn before its grant (its wait ran out) leaves the queue.
      else this.queue = this.queue.filter((ask) => ask.worker !== worker || ask.id !== message.id);
    }
    this.next();
  }

  /** A worker that exited (a kill -9 gives nothing back): its turn passes on, its asks leave the queue. */
  exited(worker: Worker): void {
    if (this.holder?.worker === worker) this.holder = undefined;
    this.queue = this.queue.filter((ask) => ask.worker !== worker);
    this.next();
  }

  private next(): void {
    while (this.holder === undefined && this.queue.length > 0) {
      const ask = this.queue.shift() as Ask;
      // A worker whose channel is closing is exiting: its exit is handled by exited().
      if (!ask.worker.isConnected()) continue;
      this.holder = ask;
      const granted: WriteTurnGranted = { type: 'write-turn', op: 'granted', id: ask.id };
      ask.worker.send(granted, () => undefined);
    }
  }
}
