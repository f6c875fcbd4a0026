/**
 * A worker's numbered asks to its supervisor over the cluster's IPC channel, each answered by one reply that
 * carries the ask's `id` (machine slots, the write turn, rate-limit credits). Each kind of ask has its own
 * channel (`supervisorAsks`), which listens from its first ask. An ask ends with the reply; `'gone'` when there is
 * no supervisor to answer (no channel, the send failed, or the channel closed while it waited); `'late'` when a
 * time was given and passed first. What each means is the caller's: a slot or a turn is granted with no
 * supervisor, a credit is not.
 */
export type Answer<R> = R | 'gone' | 'late';

export type Ask<R> = (build: (id: number) => object, timeoutMs?: number) => { id: number; answer: Promise<Answer<R>> };

export function supervisorAsks<R extends { id: number }>(isReply: (message: unknown) => message is R): Ask<R> {
  const waiting = new Map<number, (answer: Answer<R>) => void>();
  let last = 0;
  let listening = false;
  const listen = () => {
    if (listening) return;
    listening = true;
    process.on('message', (message: unknown) => {
      if (isReply(message)) waiting.get(message.id)?.(message);
    });
    process.on('disconnect', () => {
      for (const end of [...waiting.values()]) end('gone');
    });
  };
  return (build, timeoutMs) => {
    listen();
    const id = (last += 1);
    const answer = new Promise<Answer<R>>((resolve) => {
      const end = (answered: Answer<R>) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(answered);
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => end('late'), timeoutMs);
      waiting.set(id, end);
      if (!process.connected || process.send === undefined) end('gone');
      else process.send(build(id), undefined, undefined, (error: Error | null) => error !== null && end('gone'));
    });
    return { id, answer };
  };
}
