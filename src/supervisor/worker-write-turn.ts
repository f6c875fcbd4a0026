/**
 * A worker's side of the machine's write turn (src/supervisor/write-turn.ts): the port its SQLite group commit is
 * given (src/db/group-commit.ts WriteTurn, matched by shape: this room does not load the store). One round trip
 * per batch to take it, one message without reply to give it back. A turn not granted within `waitMs`
 * (DATABASE_BUSY_TIMEOUT_MS) is withdrawn and the batch goes to the lock as it is, whose own wait then ends in a
 * 503; with no supervisor to ask (draining) the turn is granted at once. Either way the write lock still decides.
 */
import { isWriteTurnMessage, type WriteTurnAsk } from './write-turn';

type Give = () => void;

const nothing: Give = () => undefined;

function send(ask: WriteTurnAsk, failed: () => void = nothing): void {
  if (!process.connected || process.send === undefined) return failed();
  process.send(ask, undefined, undefined, (error) => {
    if (error !== null) failed();
  });
}

/** The give of ask `id`: sent once, however often called. */
function giveOf(id: number): Give {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    send({ type: 'write-turn', op: 'give', id });
  };
}

export function workerWriteTurn(waitMs: number): { take: () => Promise<Give> } {
  const waiting = new Map<number, () => void>();
  let last = 0;
  process.on('message', (message: unknown) => {
    if (!isWriteTurnMessage(message) || message.op !== 'granted') return;
    // A grant for an ask already withdrawn finds nothing: the withdrawal's give frees it in the supervisor.
    waiting.get(message.id)?.();
    waiting.delete(message.id);
  });
  process.on('disconnect', () => {
    for (const grant of waiting.values()) grant();
    waiting.clear();
  });
  const take = (): Promise<Give> => {
    if (!process.connected) return Promise.resolve(nothing);
    const id = (last += 1);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        giveOf(id)();
        resolve(nothing);
      }, waitMs);
      waiting.set(id, () => {
        clearTimeout(timer);
        resolve(giveOf(id));
      });
      send({ type: 'write-turn', op: 'take', id }, () => {
        // The channel closed as it was sent: granted, as with no supervisor at all.
        clearTimeout(timer);
        waiting.delete(id);
        resolve(nothing);
      });
    });
  };
  return { take };
}
