/**
 * The supervisor's side of the limits held per machine at WORKERS above 1 (docs/decisions/workers.md, D7): per
 * kind, every slot a worker holds (a change stream open, an Idempotency-Key in flight) and which worker holds it.
 * A worker takes a slot with one round trip and gives it back without one; a worker that exits gives back all
 * of its own. It knows no kind: a worker names the slot, and for a counted kind sends the kind's maximum.
 */
import type { Worker } from 'node:cluster';
import type { SlotMessage, SlotTaken } from './slot-messages';

export class MachineSlotTable {
  // Per kind: the name of each slot held and the worker holding it.
  private readonly kinds = new Map<string, Map<string, Worker>>();

  /** A worker's take (answered at once) or give. */
  received(worker: Worker, message: SlotMessage): void {
    if (message.op === 'taken') return;
    let held = this.kinds.get(message.kind);
    if (held === undefined) this.kinds.set(message.kind, (held = new Map<string, Worker>()));
    if (message.op === 'give') {
      if (held.get(message.name) === worker) held.delete(message.name);
      return;
    }
    const granted = !held.has(message.name) && (message.max === undefined || held.size < message.max);
    if (granted) held.set(message.name, worker);
    const reply: SlotTaken = { type: 'slot', op: 'taken', id: message.id, granted };
    // A worker whose channel is closing is exiting: its exit frees what it holds.
    if (worker.isConnected()) worker.send(reply, () => undefined);
  }

  /** Frees every slot of a worker that exited: it can give none back itself. */
  exited(worker: Worker): void {
    for (const held of this.kinds.values()) {
      for (const [name, holder] of held) if (holder === worker) held.delete(name);
    }
  }
}
