/**
 * The change feed (GET /plants/events) as an async iterable, read with fetch: browsers' EventSource cannot send
 * an Authorization header. eventsource-parser splits the stream into events; ids are re-read exactly. A dropped
 * connection, a stream the service ended (shutdown, a reader cut off for falling behind) or a silent one resumes
 * with Last-Event-ID, so no change is missed or repeated. It never gives up on its own: only an abort, a break
 * out of the loop, an answer no retry can mend (401, 403, 400), or a stream the service would not send (an id that
 * is not a position, a position going back) ends it.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { backoff, isNetworkError, MAX_ANSWER_BYTES, parseJson, parsePlants, protocolError, sleep, toError, toInt64, versioned, type StoredPlant, type Versioned } from './wire.js';

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
  /** Only changes of plants whose name contains this (without case, NFKC), before or after the change. */
  q?: string;
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

/** Where the feed is: the last position seen (sent back as Last-Event-ID), and whether a stream ever opened. */
type Feed = { last?: bigint; opened: boolean };

/**
 * Takes an `id:` as the feed's position: it must be a position (an int64 in plain decimal, so it can go back as a
 * header) and at least `least` (positions only grow; a reset passes none). Anything else ends the feed with an
 * error the app can show, rather than freezing it or going back in silence.
 */
function advance(feed: Feed, response: Response, id: string | undefined, least: bigint | undefined): void {
  if (id === undefined) return;
  const position = toInt64(id);
  if (position === undefined || position < 0n) throw protocolError(response, `the feed sent id ${JSON.stringify(id)}, which is not a position`);
  if (least !== undefined && position < least) throw protocolError(response, `the feed's position went from ${feed.last} to ${position}, but positions only grow`);
  feed.last = position;
}

function toChange(message: EventSourceMessage, position: bigint | undefined, response: Response): ChangeEvent | undefined {
  if (message.event === 'reset') {
    const reason = (parseJson(message.data, response) as { reason?: string } | null)?.reason ?? 'unknown';
    return position === undefined ? { type: 'reset', reason } : { type: 'reset', reason, position };
  }
  if (position === undefined) return undefined;
  if (message.event === 'plant.deleted') return { type: 'plant.deleted', position, id: (parsePlants(message.data, response)[0] as StoredPlant).id };
  // The service documents a plant's ETag after a change as the change's position.
  if (message.event === 'plant.created' || message.event === 'plant.updated') {
    return { type: message.event, position, plant: versioned(parsePlants(message.data, response)[0] as StoredPlant, `"${position}"`) };
  }
  return undefined;
}

/**
 * One connection's events, until the stream ends or the service's `event: resume`. `arm` restarts the idle timer,
 * `pause` stops it while the app holds an event.
 */
async function* readStream(response: Response, body: ReadableStream<Uint8Array>, feed: Feed, arm: () => void, pause: () => void): AsyncGenerator<ChangeEvent, void, undefined> {
  // Reconnected with no position to resume from: changes in between may be gone.
  const lost = feed.opened && feed.last === undefined;
  feed.opened = true;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const messages: EventSourceMessage[] = [];
  let ended = 0;
  const parser = createParser({ onEvent: (message) => messages.push(message), onComment: () => (ended += 1) });
  // The stream's first block, until its blank line: the service starts a stream with `id: <position>` alone,
  // which sets the last event id and dispatches nothing (WHATWG), so eventsource-parser never reports it.
  let first: string | undefined = '';
  // Bytes since a block last ended: a stream that never ends one would be buffered without bound.
  let unended = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    arm();
    const text = decoder.decode(value, { stream: true });
    parser.feed(text);
    unended = messages.length + ended > 0 ? 0 : unended + value.length;
    ended = 0;
    if (unended > MAX_ANSWER_BYTES) throw protocolError(response, `the feed sent more than ${MAX_ANSWER_BYTES} bytes without ending an event`);
    if (first !== undefined) {
      first += text;
      if (!/\n\r?\n/.test(first)) continue;
      advance(feed, response, /^id: ?([^\r\n]*)\r?\n\r?\n/.exec(first)?.[1], feed.last);
      first = undefined;
      unended = 0;
      pause();
      yield { type: 'open' };
      if (lost) yield { type: 'reset', reason: 'unknown_position' };
      arm();
    }
    for (const message of messages.splice(0)) {
      // A change comes after the last position; a reset sets a new one; anything else does not go back.
      const change = message.event?.startsWith('plant.') === true && feed.last !== undefined;
      advance(feed, response, message.id, message.event === 'reset' ? undefined : change ? (feed.last as bigint) + 1n : feed.last);
      // The service cut this reader off for falling behind; its id is the last event delivered.
      if (message.event === 'resume') return;
      const event = toChange(message, message.id === undefined ? undefined : feed.last, response);
      if (event === undefined) continue;
      pause();
      yield event;
      arm();
    }
  }
}

export async function* readChanges(transport: FeedTransport, query: ChangesQuery): AsyncGenerator<ChangeEvent, void, undefined> {
  const { signal, idleTimeoutMs = 45_000 } = query;
  const feed: Feed = { last: query.after, opened: false };
  let failures = 0;
  // A function: TypeScript would keep the loop condition's narrowing across the awaits.
  const aborted = () => signal?.aborted === true;
  while (!aborted()) {
    const connection = new AbortController();
    const drop = () => connection.abort();
    signal?.addEventListener('abort', drop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const pause = () => clearTimeout(idle);
    const arm = () => {
      pause();
      idle = setTimeout(drop, idleTimeoutMs);
    };
    let wait = 0;
    try {
      const headers: Record<string, string> = { ...(await transport.headers()), Accept: 'text/event-stream' };
      if (feed.last !== undefined) headers['Last-Event-ID'] = String(feed.last);
      arm();
      const response = await transport.fetch(transport.url, { headers, signal: connection.signal, redirect: 'manual' });
      if (!response.ok) {
        const error = await toError(response);
        if (response.status !== 429 && response.status !== 503) throw error;
        wait = error.retryAfterMs ?? 0;
      } else if (response.body !== null) {
        failures = 0;
        yield* readStream(response, response.body, feed, arm, pause);
      }
    } catch (error) {
      if (aborted()) return;
      // Network failures and the idle timer's own abort reconnect; anything else is the caller's to see.
      if (!isNetworkError(error) && !connection.signal.aborted) throw error;
    } finally {
      pause();
      signal?.removeEventListener('abort', drop);
      connection.abort();
    }
    failures += 1;
    try {
      // Retry-After is at most MAX_WAIT_MS (wire.ts), and never sooner than the backoff: not even on Retry-After: 0.
      await sleep(Math.max(wait, backoff(failures, transport.maxDelayMs)), signal);
    } catch {
      return;
    }
  }
}
