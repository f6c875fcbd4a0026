/**
 * A resuming stream's way up to the feed's head (src/plants/plant.feed.ts): it reads its own tenant's events, in
 * pages, and joins live delivery synchronously once it stands at the head. It never reads the shared log for live
 * delivery and never ends a stream itself: the feed does both.
 */
import type { TenantKey } from '../tenant';
import type { ChangeEvent } from './plant.events';
import { concerns, EventView } from './plant.feed-filter';
import { frameOf, nextTurn, type Stream } from './plant.feed-stream';

/** What a catch-up needs of its feed. */
export type CatchingUp = {
  /** The feed's head as it is now; undefined while the feed has no head. */
  head(): bigint | undefined;
  /** The tenant's events after `after`, ascending, at most `limit`. */
  read(tenant: TenantKey, after: bigint, limit: number): Promise<ChangeEvent[]>;
  /** Writes a frame, or queues it while the socket is full (cutting the stream off past its bound). */
  send(stream: Stream, frame: string, pos: bigint): void;
  /** Called synchronously once the stream stands at the head: the feed delivers every later event to it. */
  join(stream: Stream): void;
  /** The events could not be read: the feed ends the stream so the client resumes. */
  fail(stream: Stream, err: unknown): void;
};

/** From the stream's position up to the feed's head, `limit` events a read, then live. */
export async function catchUp(stream: Stream, limit: number, feed: CatchingUp): Promise<void> {
  try {
    while (!stream.closed) {
      if (stream.blocked) await new Promise<void>((resolve) => (stream.drained = resolve));
      if (stream.closed) return;
      const head = feed.head();
      if (head !== undefined && stream.cursor >= head) break;
      const events = await feed.read(stream.tenant, stream.cursor, limit);
      if (stream.closed) return;
      for (const event of events) {
        if (event.pos <= stream.cursor) continue;
        // The rule live delivery applies (LiveStreams offers each event to the streams `concerns` accepts).
        if (concerns(stream.filter, new EventView(event))) feed.send(stream, frameOf(event), event.pos);
        else stream.cursor = event.pos;
        if (stream.closed) return;
      }
      if (events.length < limit) {
        // The tenant has no other event up to the head the read began under (every position up to it was
        // committed before the read): the stream stands there, past other tenants' events, and the check above
        // compares it with the head as it is now, synchronously before joining.
        if (head === undefined) break;
        if (head > stream.cursor) stream.cursor = head;
        continue;
      }
      // A long way to catch up, most of it about other plants, must not hold the event loop either.
      await nextTurn();
    }
    if (stream.closed) return;
    // Synchronously after the check: from here on the feed delivers every event past its head to the stream.
    feed.join(stream);
  } catch (err) {
    feed.fail(stream, err);
  }
}
