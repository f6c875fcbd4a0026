/**
 * A worker's side of the machine slots (src/supervisor/slots.ts): the port the service's resources are given
 * (src/resource.ts MachineSlots, matched by shape: this room does not load the service). Each take is one round
 * trip to the supervisor; each release one message back, sent once. With no supervisor to ask (its channel
 * closed: the worker is draining), a take is granted: the process's own count still applies.
 */
import { isSlotMessage, type SlotGive, type SlotTake } from './slot-messages';

type Release = () => void;

export type WorkerSlots = {
  count(kind: string, max: number): Promise<Release | undefined>;
  hold(kind: string, name: string): Promise<Release | undefined>;
};

const nothing: Release = () => undefined;

export function workerSlots(): WorkerSlots {
  const waiting = new Map<number, (granted: boolean) => void>();
  let last = 0;
  process.on('message', (message: unknown) => {
    if (!isSlotMessage(message) || message.op !== 'taken') return;
    waiting.get(message.id)?.(message.granted);
    waiting.delete(message.id);
  });
  process.on('disconnect', () => {
    for (const answer of waiting.values()) answer(true);
    waiting.clear();
  });

  const take = (kind: string, name: string, max?: number): Promise<Release | undefined> => {
    if (!process.connected || process.send === undefined) return Promise.resolve(nothing);
    const id = (last += 1);
    const request: SlotTake = max === undefined ? { type: 'slot', op: 'take', id, kind, name } : { type: 'slot', op: 'take', id, kind, name, max };
    return new Promise((resolve) => {
      waiting.set(id, (granted) => resolve(granted ? releaseOf(kind, name) : undefined));
      process.send?.(request, undefined, undefined, (error) => {
        if (error === null) return;
        // The channel closed as it was sent: granted, as with no supervisor at all.
        waiting.delete(id);
        resolve(nothing);
      });
    });
  };
  // A counted slot's name only has to differ from every other worker's: this process's id and a number.
  let counted = 0;
  return {
    count: (kind, max) => take(kind, `${process.pid}:${(counted += 1)}`, max),
    hold: (kind, name) => take(kind, name),
  };
}

function releaseOf(kind: string, name: string): Release {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const give: SlotGive = { type: 'slot', op: 'give', kind, name };
    if (process.connected) process.send?.(give, undefined, undefined, () => undefined);
  };
}
