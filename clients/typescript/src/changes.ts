/**
 * The change feed (GET /plants/events) as an async iterable, read with fetch: browsers' EventSource cannot send
 * an Authorization header. eventsource-parser splits the stream into events; ids are re-read exactly. A dropped
 * connection, a stream the service ended (shutdown, a reader cut off for falling behind) or a silent one resumes
 * with Last-Event-ID, so no change is missed or repeated. It never gives up on its own: only an abort, a break
 * out of the loop, or an answer no retry can mend (401, 403, 400) ends it.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { backoff, isNetworkError, parsePlants, sleep, toError, versioned, type StoredPlant, type Versioned } from './wire.js';

export type ChangeEvent =
  /**
   * Connected (again), the stream's position known: every change committed from here on follows. Comes first, and
   * after each reconnection.
   */
  | { type: 'open' }
  /**
   * What was shown may be stale: reload it, then keep reading. From the service when the position resumed from
   * was pruned or never written; from the client when it reconnected with no position to resume from (a service
   * that does not start its streams with one).
   */
  | { type: 'reset'; reason: string; position?: bigint }
  | { type: 'plant.created' | 'plant.updated'; position: bigint; plant: Versioned<StoredPlant> }
  | { type: 'plant.deleted'; position: bigint; id: bigint };

export type ChangesQuery = {
  /** Resume after this position (a ChangeEvent's `position`); without it the feed starts live. */
  after?: bigint;
  tag?: string;
  signal?: AbortSignal;
  /** A connection silent this long (no event, no heartbeat) is taken as dead and reopened. The service beats every 15 s. */
  idleTimeoutMs?: number;
};

export type FeedTransport = {
  fetch: typeof fetch;
  url: string;
  headers: () => Promise<Record<string, string>>;
  maxDelayMs: number;
};

const POSITION = /^\d+$/;

function toChange(message: EventSourceMessage): ChangeEvent | undefined {
  const position = message.id !== undefined && POSITION.test(message.id) ? BigInt(message.id) : undefined;
  if (message.event === 'reset') {
    const { reason } = JSON.parse(message.data) as { reason?: string };
    return position === undefined ? { type: 'reset', reason: reason ?? 'unknown' } : { type: 'reset', reason: reason ?? 'unknown', position };
  }
  if (position === undefined) return undefined;
  if (message.event === 'plant.deleted') return { type: 'plant.deleted', position, id: (parsePlants(message.data)[0] as StoredPlant).id };
  // The service documents a plant's ETag after a change as the change's position.
  if (message.event === 'plant.created' || message.event === 'plant.updated') {
    return { type: message.event, position, plant: versioned(parsePlants(message.data)[0] as StoredPlant, `"${position}"`) };
  }
  return undefined;
}

export async function* readChanges(transport: FeedTransport, query: ChangesQuery): AsyncGenerator<ChangeEvent, void, undefined> {
  const { signal, idleTimeoutMs = 45_000 } = query;
  let lastId = query.after?.toString();
  let opened = false;
  let failures = 0;
  // A function: TypeScript would keep the loop condition's narrowing across the awaits.
  const aborted = () => signal?.aborted === true;
  while (!aborted()) {
    const connection = new AbortController();
    const drop = () => connection.abort();
    signal?.addEventListener('abort', drop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(drop, idleTimeoutMs);
    };
    let wait: number | undefined;
    try {
      const headers: Record<string, string> = { ...(await transport.headers()), Accept: 'text/event-stream' };
      if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
      arm();
      const response = await transport.fetch(transport.url, { headers, signal: connection.signal });
      if (!response.ok) {
        const error = await toError(response);
        if (response.status !== 429 && response.status !== 503) throw error;
        wait = error.retryAfterMs;
      } else if (response.body !== null) {
        const lost = opened && lastId === undefined;
        opened = true;
        failures = 0;
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        const messages: EventSourceMessage[] = [];
        const parser = createParser({ onEvent: (message) => messages.push(message) });
        // The stream's first block, until its blank line: the service starts a stream with `id: <position>` alone,
        // which sets the last event id and dispatches nothing (WHATWG), so eventsource-parser never reports it.
        let first: string | undefined = '';
        let resume = false;
        while (!resume) {
          const { done, value } = await reader.read();
          if (done) break;
          arm();
          const text = decoder.decode(value, { stream: true });
          parser.feed(text);
          if (first !== undefined) {
            first += text;
            if (!/\n\r?\n/.test(first)) continue;
            const start = /^id: ?(\d+)\r?\n\r?\n/.exec(first)?.[1];
            if (start !== undefined) lastId = start;
            first = undefined;
            clearTimeout(idle);
            yield { type: 'open' };
            // Reconnected with no position to resume from: changes in between may be gone.
            if (lost) yield { type: 'reset', reason: 'unknown_position' };
            arm();
          }
          for (const message of messages.splice(0)) {
            if (message.id !== undefined) lastId = message.id;
            // The service cut this reader off for falling behind; its id is the last event delivered.
            resume = message.event === 'resume';
            if (resume) break;
            const change = toChange(message);
            if (change === undefined) continue;
            clearTimeout(idle);
            yield change;
            arm();
          }
        }
      }
    } catch (error) {
      if (aborted()) return;
      // Network failures and the idle timer's own abort reconnect; anything else is the caller's to see.
      if (!isNetworkError(error) && !connection.signal.aborted) throw error;
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', drop);
      connection.abort();
    }
    failures += 1;
    try {
      await sleep(wait ?? backoff(failures, transport.maxDelayMs), signal);
    } catch {
      return;
    }
  }
}
