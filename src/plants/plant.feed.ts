/**
 * The change feed of one process: reads the events table once per wake-up (a local commit, another replica's
 * NOTIFY, a poll) and hands each event to every open stream it concerns, as one shared server-sent-events frame.
 * A stream that resumes from an older position first reads its own way up to the feed's head, then joins
 * (plant.feed-catch-up.ts). The table is the truth; the wake-ups only say when to look. It never blocks a write:
 * a commit only calls wake(). A stream sees its own tenant's events only (StreamStart.tenant); positions are the
 * store's, so it sees gaps. Knows SSE framing, not Express: a stream is any writable that has write, end and 'drain'.
 */
import type { Logger } from '../logger';
import type { MachineSlots } from '../resource';
import { AppError } from '../errors';
import { type ChangeEvent, type ChangeSignal, type PlantEventLog } from './plant.events';
import { catchUp, type CatchingUp } from './plant.feed-catch-up';
import { filterOf, TenantStreams } from './plant.feed-filter';
import { controlFrame, frameOf, HEARTBEAT, nextTurn, positionFrame, resetOf, Stream, StreamSlots, type FeedConfig, type FeedObserver, type Sink, type StreamStart } from './plant.feed-stream';

export type { FeedConfig, FeedObserver, Sink, StreamLease, StreamStart } from './plant.feed-stream';

const PAGE = 500;
const POLL_MS = 5000;

export class PlantFeed {
  private head: bigint | undefined;
  private starting: Promise<bigint> | undefined;
  private reading = false;
  private again = false;
  private readonly slots: StreamSlots;
  private readonly streams = new Set<Stream>();
  private readonly live = new TenantStreams<Stream>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly log: PlantEventLog,
    private readonly changes: ChangeSignal,
    private readonly config: FeedConfig,
    private readonly logger: Logger,
    private readonly observer?: FeedObserver,
    machine?: MachineSlots,
  ) {
    this.slots = new StreamSlots(config.maxStreams, observer, machine);
  }

  /** Background work, after the listener: wake-ups, the poll and the heartbeat (pruning: pruneEventsEvery). */
  start(): void {
    this.stopped = false;
    this.unsubscribe = this.changes(this.wake);
    this.timers = [
      setInterval(this.wake, POLL_MS),
      setInterval(this.heartbeat, this.config.heartbeatMs),
    ];
    for (const timer of this.timers) timer.unref();
    this.wake();
  }

  /** Ends every stream at once (their clients reconnect elsewhere) and stops the background work. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const stream of [...this.streams]) this.close(stream, true);
  }

  get openStreams(): number {
    return this.slots.count;
  }

  /**
   * Opens a stream: checks the limit and the store (throwing the AppError to answer), then calls `begin` for the
   * sink once the answer is sure, and sends what the position asks for: its position (or a reset), the events since, then live.
   */
  async open(start: StreamStart, begin: () => Sink): Promise<void> {
    if (this.stopped) throw new AppError('shutting_down');
    const taken = this.slots.take();
    // One process answers synchronously; a worker (WORKERS above 1) waits for the machine's slot.
    const release = typeof taken === 'function' ? taken : await taken;
    try {
      const head = await this.ensureHead();
      const reset = await resetOf(this.log, start);
      const from = reset?.pos ?? start.after ?? head;
      if (this.stopped) throw new AppError('shutting_down');
      const stream = new Stream(begin(), start.tenant, filterOf(start.tag, start.q), from, this.observer);
      this.streams.add(stream);
      stream.sink.once('close', () => {
        release();
        this.close(stream, false);
      });
      // The first block always carries the position the stream starts after: a live start has no other.
      if (reset !== undefined) stream.sink.write(controlFrame('reset', reset.pos, `{"reason":"${reset.reason}"}`));
      else stream.sink.write(positionFrame(from));
      // After the first block: a credential revoked meanwhile ends the stream with its last event, never before.
      stream.unwatch = start.lease?.watch('plants:read', (reason) => this.lapse(stream, reason));
      void catchUp(stream, Math.min(PAGE, this.config.bufferEvents), this.catchingUp);
    } catch (error) {
      release();
      throw error;
    }
  }

  /** A resuming stream reads its own tenant's events, on the store's (tenant, pos) index. */
  private readonly catchingUp: CatchingUp = {
    head: () => this.head,
    read: (tenant, after, limit) => this.log.readTenantEvents(tenant, after, limit),
    send: (stream, frame, pos) => this.send(stream, frame, pos),
    join: (stream) => {
      // No head (the feed had no stream when a commit woke it): the feed reads on from what this stream has read.
      // Found again from the store's last position, it would pass over the events committed since that read.
      this.head ??= stream.cursor;
      this.live.add(stream);
    },
    fail: (stream, err) => {
      this.logger.warn({ err }, 'change stream could not read the events; ending it so the client resumes');
      this.close(stream, true);
    },
  };

  /** New events may be readable: read them all, in pages, and deliver each. Reentrant calls fold into one. */
  readonly wake = (): void => {
    if (this.stopped) return;
    // No stream to deliver to: no read either. The head is found again when the next stream opens.
    if (this.streams.size === 0 && !this.reading) {
      this.head = undefined;
      return;
    }
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    this.readAll().then(
      () => {
        this.reading = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      },
      (err: unknown) => {
        this.reading = false;
        this.again = false;
        // The store is away or not migrated yet: the next wake-up or poll tries again.
        this.logger.debug({ err }, 'change feed cannot read the events now');
      },
    );
  };

  private async ensureHead(): Promise<bigint> {
    if (this.head !== undefined) return this.head;
    this.starting ??= this.log.eventBounds().then(
      ({ last }) => {
        this.head ??= last;
        this.starting = undefined;
        return this.head;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw error;
      },
    );
    return this.starting;
  }

  /**
   * Pages a turn of the event loop apart: in a burst (an import, a large group commit) every socket writes what
   * a page gave it and every 'drain' fires before the next, so a stream is cut off for what its socket held back,
   * never for frames it had no turn to take. Smaller pages would let the feed fall behind a busy store.
   */
  private async readAll(): Promise<void> {
    let head = await this.ensureHead();
    for (;;) {
      this.again = false;
      const events = await this.log.readEvents(head, PAGE);
      const now = Date.now();
      for (const event of events) {
        this.deliver(event);
        head = event.pos;
        this.head = head;
        this.observer?.lag(Math.max(0, now - event.at) / 1000);
      }
      if (events.length < PAGE) return;
      await nextTurn();
      if (this.stopped) return;
    }
  }

  private deliver(event: ChangeEvent): void {
    let frame: string | undefined;
    this.live.forEach(event, (stream) => {
      if (event.pos <= stream.cursor) return;
      frame ??= frameOf(event);
      this.send(stream, frame, event.pos);
    });
  }

  /** Writes a frame, or queues it while the socket is full; past the bound the reader is cut off. */
  private send(stream: Stream, frame: string, pos: bigint): void {
    if (!stream.send(frame, pos, this.config.bufferEvents)) this.cutOff(stream);
  }

  /** The reader fell too far behind. */
  private cutOff(stream: Stream): void {
    this.observer?.cutOff();
    this.logger.info({ behind: stream.queue.length }, 'change stream cut off: the reader fell behind');
    this.endWithResume(stream, 'too_slow');
  }

  /** The credential the stream was opened with no longer grants reading: a reconnection with it meets 401 or 403. */
  private lapse(stream: Stream, reason: 'revoked' | 'expired'): void {
    if (stream.closed) return;
    this.logger.info({ reason }, `change stream ended: its credential ${reason === 'expired' ? 'expired' : 'was revoked'}`);
    this.endWithResume(stream, `token_${reason}`);
  }

  /** One last event says why and to resume after what the reader has (with a valid credential), then the stream ends. */
  private endWithResume(stream: Stream, reason: string): void {
    stream.sink.write(controlFrame('resume', stream.written, `{"reason":"${reason}"}`));
    this.close(stream, true);
    // What was written may never be read; the socket does not wait for it longer than a heartbeat.
    setTimeout(() => stream.sink.destroy(), this.config.heartbeatMs).unref();
  }

  private close(stream: Stream, end: boolean): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.unwatch?.();
    this.streams.delete(stream);
    stream.drained?.();
    this.live.remove(stream);
    if (end) stream.sink.end();
  }

  private readonly heartbeat = (): void => {
    for (const stream of this.streams) if (!stream.blocked) stream.sink.write(HEARTBEAT);
  };
}
