/** A hostile server of the test's making: one node:http server on 127.0.0.1, every request it got kept. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Seen = { method: string; url: string; authorization?: string; lastEventId?: string; at: number };

export async function hostileServer(answer: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen[]) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, lastEventId: req.headers['last-event-id'] as string | undefined, at: Date.now() });
    answer(req, res, seen);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type HostileServer = Awaited<ReturnType<typeof hostileServer>>;

/** Answers JSON text as given, with any extra headers. */
export function json(res: http.ServerResponse, text: string, headers: Record<string, string> = {}, status = 200): void {
  // Every list answer of the service carries its Feed-Position; a hostile one here does too, so what is tested is the rest.
  res.writeHead(status, { 'Content-Type': 'application/json', 'Feed-Position': '0', ...headers });
  res.end(text);
}

/** What a promise settled with: the value, or the error it rejected with. */
export const settle = (promise: Promise<unknown>): Promise<unknown> => promise.catch((error: unknown) => error);

/** Every plant of client.plants() until it ends, throws, or `limit` plants came (a loop the client did not stop). */
export async function drain<T>(iterable: AsyncIterable<T>, limit = 20): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of iterable) {
      items.push(item);
      if (items.length >= limit) return { items, error: 'still going' };
    }
    return { items };
  } catch (error) {
    return { items, error };
  }
}
