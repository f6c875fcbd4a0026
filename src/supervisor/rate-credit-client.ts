/**
 * A worker's side of the rate-limit credits (src/supervisor/rate-credits.ts): one ask over the IPC channel, one
 * reply; and the supervisor's reclaim of a window's unused credits, answered at once with what this worker gave
 * back. An ask the supervisor does not answer in time (it is gone, and this worker drains) rejects, and the
 * limiter lets that request through, as it does while Redis is away.
 */
import { isCreditAnswer, type CreditAsk, type CreditReclaim, type CreditReply } from './rate-credits';
import { supervisorAsks } from './worker-asks';

const REPLY_MS = 1000;

export type Grant = Pick<CreditReply, 'granted' | 'before' | 'resetAt'>;
/** Drops this worker's unused credits of one key's window (ended at `resetAt`) and says how many they were. */
export type Release = (store: string, key: string, resetAt: number) => number;

/** The channel the worker's credit stores use (src/http/rate-limit.credits.ts); it listens from its first ask. */
export function creditsFromSupervisor() {
  const asks = supervisorAsks(isCreditReply);
  let release: Release = () => 0;
  let listening = false;
  // The reclaims come unasked: listened for from the first ask, as the replies are.
  const listen = () => {
    if (listening) return;
    listening = true;
    process.on('message', (message: unknown) => {
      if (isCreditAnswer(message) && message.type === 'rate-reclaim') giveBack(message, release);
    });
  };
  const ask = async (store: string, key: string, limit: number): Promise<Grant> => {
    listen();
    const answer = await asks((id): CreditAsk => ({ type: 'rate-credit', id, store, key, limit }), REPLY_MS).answer;
    if (answer === 'late') throw new Error(`rate-limit credits: the supervisor did not answer within ${REPLY_MS} ms`);
    if (answer === 'gone') throw new Error('rate-limit credits: no supervisor');
    const { granted, before, resetAt } = answer;
    return { granted, before, resetAt };
  };
  return {
    ask,
    onReclaim: (handler: Release) => {
      release = handler;
    },
  };
}

const isCreditReply = (message: unknown): message is CreditReply => isCreditAnswer(message) && message.type === 'rate-credit';

function giveBack({ store, key, resetAt }: CreditReclaim, release: Release): void {
  const back: CreditReclaim = { type: 'rate-reclaim', store, key, resetAt, unused: release(store, key, resetAt) };
  if (process.connected) process.send?.(back);
}
