/**
 * A worker's side of the rate-limit credits (src/supervisor/rate-credits.ts): one ask over the IPC channel, one
 * reply; and the supervisor's reclaim of a window's unused credits, answered at once with what this worker gave
 * back. An ask the supervisor does not answer in time (it is gone, and this worker drains) rejects, and the
 * limiter lets that request through, as it does while Redis is away.
 */
import { isCreditAnswer, type CreditAsk, type CreditReclaim, type CreditReply } from './rate-credits';

const REPLY_MS = 1000;

export type Grant = Pick<CreditReply, 'granted' | 'before' | 'resetAt'>;
/** Drops this worker's unused credits of one key's window (ended at `resetAt`) and says how many they were. */
export type Release = (store: string, key: string, resetAt: number) => number;

/** The channel the worker's credit stores use (src/http/rate-limit.credits.ts); it listens from its first ask. */
export function creditsFromSupervisor() {
  const waiting = new Map<number, (reply: CreditReply) => void>();
  let release: Release = () => 0;
  let last = 0;
  let listening = false;
  const listen = () => {
    if (listening) return;
    listening = true;
    process.on('message', (message: unknown) => {
      if (!isCreditAnswer(message)) return;
      if (message.type === 'rate-credit') waiting.get(message.id)?.(message);
      else giveBack(message, release);
    });
  };
  const ask = (store: string, key: string, limit: number): Promise<Grant> => {
    listen();
    const id = (last += 1);
    return new Promise<Grant>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        waiting.delete(id);
        reject(new Error(`rate-limit credits: ${why}`));
      };
      const timer = setTimeout(() => fail(`the supervisor did not answer within ${REPLY_MS} ms`), REPLY_MS);
      waiting.set(id, ({ granted, before, resetAt }) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve({ granted, before, resetAt });
      });
      const message: CreditAsk = { type: 'rate-credit', id, store, key, limit };
      if (process.send === undefined || !process.connected) fail('no supervisor');
      else process.send(message, undefined, {}, (err: Error | null) => err && fail(err.message));
    });
  };
  return {
    ask,
    onReclaim: (handler: Release) => {
      release = handler;
    },
  };
}

function giveBack({ store, key, resetAt }: CreditReclaim, release: Release): void {
  const back: CreditReclaim = { type: 'rate-reclaim', store, key, resetAt, unused: release(store, key, resetAt) };
  if (process.connected) process.send?.(back);
}
