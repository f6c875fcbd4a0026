/**
 * A worker's side of the machine's write turn (src/supervisor/write-turn.ts): the port its SQLite group commit is
 * given (src/db/group-commit.ts WriteTurn, matched by shape: this room does not load the store). One round trip
 * per batch to take it, one message without reply to give it back. A turn not granted within `waitMs`
 * (DATABASE_BUSY_TIMEOUT_MS) is withdrawn and the batch goes to the lock as it is, whose own wait then ends in a
 * 503; with no supervisor to ask (draining) the turn is granted at once. Either way the write lock still decides.
 */
import { supervisorAsks } from './worker-asks';
import { isWriteTurnMessage, type WriteTurnAsk, type WriteTurnGranted } from './write-turn';

type Give = () => void;

const nothing: Give = () => undefined;

/** The give of ask `id`: sent once, however often called. */
function giveOf(id: number): Give {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const give: WriteTurnAsk = { type: 'write-turn', op: 'give', id };
    if (process.connected) process.send?.(give, undefined, undefined, () => undefined);
  };
}

export function workerWriteTurn(waitMs: number): { take: () => Promise<Give> } {
  const ask = supervisorAsks(isGranted);
  const take = async (): Promise<Give> => {
    const { id, answer } = ask((id): WriteTurnAsk => ({ type: 'write-turn', op: 'take', id }), waitMs);
    const granted = await answer;
    if (granted !== 'gone' && granted !== 'late') return giveOf(id);
    // Not granted in time: withdrawn (a grant coming later is given straight back). With no supervisor (draining,
    // or the channel closed as it was sent): granted, the give sending nothing. Either way the lock decides.
    giveOf(id)();
    return nothing;
  };
  return { take };
}

const isGranted = (message: unknown): message is WriteTurnGranted => isWriteTurnMessage(message) && message.op === 'granted';
