/**
 * A worker's side of the rate-limit credits (src/supervisor/rate-credits.ts): one ask over the IPC channel, one
 * reply. An ask the supervisor does not answer in time (it is gone, and this worker drains) rejects, and the
 * limiter lets that request through, as it does while Redis is away.
 */
import { isCreditMessage, type CreditAsk, type CreditReply } from './rate-credits';

const REPLY_MS = 1000;

export type Grant = Pick<CreditReply, 'granted' | 'before' | 'resetAt'>;

/** The ask function the worker's credit stores call (src/http/rate-limit.credits.ts); listens from its first ask. */
export function creditsFromSupervisor(): (store: string, key: string, limit: number) => Promise<Grant> {
  const waiting = new Map<number, (reply: CreditReply) => void>();
  let last = 0;
  let listening = false;
  return (store, key, limit) => {
    if (!listening) {
      listening = true;
      process.on('message', (message: unknown) => {
        if (isCreditMessage(message)) waiting.get(message.id)?.(message);
      });
    }
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
      const ask: CreditAsk = { type: 'rate-credit', id, store, key, limit };
      if (process.send === undefined || !process.connected) fail('no supervisor');
      else process.send(ask, undefined, {}, (err: Error | null) => err && fail(err.message));
    });
  };
}
