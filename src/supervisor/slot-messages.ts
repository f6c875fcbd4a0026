/** What a worker and its supervisor say about machine slots (src/supervisor/slots.ts) over the cluster's IPC. Types only. */

/** Worker → supervisor: take slot `name` of `kind` (with `max`: while fewer than `max` of the kind are held). */
export type SlotTake = { type: 'slot'; op: 'take'; id: number; kind: string; name: string; max?: number };

/** Worker → supervisor: the slot is free again (a stream closed, a keyed write answered). No reply. */
export type SlotGive = { type: 'slot'; op: 'give'; kind: string; name: string };

/** Supervisor → worker: the answer to the take of this `id`. */
export type SlotTaken = { type: 'slot'; op: 'taken'; id: number; granted: boolean };

export type SlotMessage = SlotTake | SlotGive | SlotTaken;

export function isSlotMessage(message: unknown): message is SlotMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'slot';
}
