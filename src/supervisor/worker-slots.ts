/**
 * A worker's side of the machine slots (src/supervisor/slots.ts): the port the service's resources are given
 * (src/resource.ts MachineSlots, matched by shape: this room does not load the service). Each take is one round
 * trip to the supervisor; each release one message back, sent once. With no supervisor to ask (its channel
 * closed: the worker is draining), a take is granted: the process's own count still applies.
 */
import { isSlotMessage, type SlotGive, type SlotTake, type SlotTaken } from './slot-messages';
import { supervisorAsks } from './worker-asks';

type Release = () => void;

export type WorkerSlots = {
  count(kind: string, max: number): Promise<Release | undefined>;
  hold(kind: string, name: string): Promise<Release | undefined>;
};

const nothing: Release = () => undefined;

export function workerSlots(): WorkerSlots {
  const ask = supervisorAsks(isSlotTaken);
  const take = async (kind: string, name: string, max?: number): Promise<Release | undefined> => {
    const request = (id: number): SlotTake => (max === undefined ? { type: 'slot', op: 'take', id, kind, name } : { type: 'slot', op: 'take', id, kind, name, max });
    const answer = await ask(request).answer;
    // No supervisor to ask (draining, or the channel closed as it was sent): granted, the process's own count applies.
    if (answer === 'gone' || answer === 'late') return nothing;
    return answer.granted ? releaseOf(kind, name) : undefined;
  };
  // A counted slot's name only has to differ from every other worker's: this process's id and a number.
  let counted = 0;
  return {
    count: (kind, max) => take(kind, `${process.pid}:${(counted += 1)}`, max),
    hold: (kind, name) => take(kind, name),
  };
}

const isSlotTaken = (message: unknown): message is SlotTaken => isSlotMessage(message) && message.op === 'taken';

function releaseOf(kind: string, name: string): Release {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const give: SlotGive = { type: 'slot', op: 'give', kind, name };
    if (process.connected) process.send?.(give, undefined, undefined, () => undefined);
  };
}
