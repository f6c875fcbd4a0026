/**
 * One change stream's side of the feed (src/plants/plant.feed.ts): the SSE frames, and the stream's position and
 * bounded queue while its socket is full. Knows SSE framing, not Express.
 */
import { AppError } from '../errors';
import type { TenantKey } from '../tenant';
import { escapeLineSeparators } from '../json-text';
import type { FeedObserver } from '../observers';
import type { MachineSlots } from '../resource';
import type { ChangeEvent, PlantEventLog } from './plant.events';
import type { FeedFilter } from './plant.feed-filter';
import { deletedPlantJson, plantJson, type PlantFields } from './plant.json';

export type FeedConfig = {
  heartbeatMs: number;
  maxStreams: number;
  /** Frames queued for a stream whose socket is full, at most; one more cuts it off. */
  bufferEvents: number;
};

/** What the feed reports, for src/metrics; synchronous, cheap, never throws. */
export type { FeedObserver } from '../observers';

export type Sink = {
  write(chunk: string): boolean;
  end(): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  destroy(): void;
};

/**
 * How long the credential a stream was opened with holds (src/auth's Lease, wired by src/app.ts): `watch` calls
 * `lapsed` once, when it no longer grants reading (revoked) or expires, and returns the stop.
 */
export type StreamLease = { watch(scope: 'plants:read', lapsed: (reason: 'revoked' | 'expired') => void): () => void };

/**
 * Where a stream starts: `tenant`, whose events alone it carries; after a position, or live from now; `malformed` a
 * Last-Event-ID that is no position. `tag` and `q`: the filters, as GET /plants reads them (plant.feed-filter.ts),
 * inside the tenant. `lease`: the stream ends when its credential does; absent, it lasts until the client leaves.
 */
export type StreamStart = { tenant: TenantKey; after?: bigint; tag?: string; q?: string; malformed?: boolean; lease?: StreamLease };

export const HEARTBEAT = ':\n\n';

/**
 * One turn of the event loop (its I/O phase included): between slices of a burst every socket writes what it was
 * given and every 'drain' fires, so a reader's queue holds only what its socket could not take.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// A created or updated event carries the plant's members as stored (name always), so the writer reads the event
// itself: no copy per event, and a member the events gain reaches the frame with no edit here.
const DATA_OF: Record<ChangeEvent['kind'], (event: ChangeEvent) => string> = {
  created: (event) => plantJson(event as PlantFields),
  updated: (event) => plantJson(event as PlantFields),
  deleted: (event) => deletedPlantJson(event.id),
};

/** One event as its SSE frame: the same text for every stream it goes to, with no raw line separator in `data:`. */
export const frameOf = (event: ChangeEvent): string => `event: plant.${event.kind}\nid: ${event.pos}\ndata: ${escapeLineSeparators(DATA_OF[event.kind](event))}\n\n`;

export const controlFrame = (name: string, pos: bigint, data: string): string => `event: ${name}\nid: ${pos}\ndata: ${data}\n\n`;

/**
 * A block with only an id: per the WHATWG format it sets the reader's last event id and dispatches nothing, so a
 * reader that reconnects before any event resumes from where its stream started.
 */
export const positionFrame = (pos: bigint): string => `id: ${pos}\n\n`;

/**
 * The open streams, counted against MAX_STREAMS for the feed's answer and for its metrics: in this process, and
 * with `machine` (WORKERS above 1) also across the machine, which takes one round trip to the supervisor per open.
 */
export class StreamSlots {
  private opened = 0;

  constructor(
    private readonly max: number,
    private readonly observer?: FeedObserver,
    private readonly machine?: MachineSlots,
  ) {}

  get count(): number {
    return this.opened;
  }

  /**
   * A slot, or the too_many_streams AppError (thrown, or the promise's rejection with `machine`); the release it
   * returns frees the slot once, however often called. Without `machine` it answers synchronously.
   */
  take(): (() => void) | Promise<() => void> {
    if (this.opened >= this.max) throw new AppError('too_many_streams');
    if (this.machine === undefined) return this.local();
    return this.machine.count('streams', this.max).then((give) => {
      if (give === undefined) throw new AppError('too_many_streams');
      // The machine holds at least this process's streams, so a slot it grants is one below max here too.
      const local = this.local();
      return () => {
        local();
        give();
      };
    });
  }

  private local(): () => void {
    this.opened += 1;
    this.observer?.streams(this.opened);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.opened -= 1;
      this.observer?.streams(this.opened);
    };
  }
}

export class Stream {
  /** The last position this stream has been given (written or queued), or started after. */
  cursor: bigint;
  live = false;
  closed = false;
  blocked = false;
  queue: string[] = [];
  queuePositions: bigint[] = [];
  /** The last position written to the socket: where the client resumes when cut off. */
  written: bigint;
  /** Set while a catch-up waits for the socket to drain. */
  drained?: () => void;
  /** Stops watching the stream's credential. */
  unwatch?: () => void;

  constructor(
    readonly sink: Sink,
    /** The tenant the stream was opened in: the only one whose events it carries. */
    readonly tenant: TenantKey,
    readonly filter: FeedFilter,
    start: bigint,
    private readonly observer: FeedObserver | undefined,
  ) {
    this.cursor = start;
    this.written = start;
  }

  /** Writes a frame, or queues it while the socket is full; false when the queue already holds `limit`. */
  send(frame: string, pos: bigint, limit: number): boolean {
    this.cursor = pos;
    if (this.blocked) {
      if (this.queue.length >= limit) return false;
      this.queue.push(frame);
      this.queuePositions.push(pos);
      return true;
    }
    this.observer?.sent(1);
    this.written = pos;
    if (!this.sink.write(frame)) this.block();
    return true;
  }

  private block(): void {
    this.blocked = true;
    this.sink.once('drain', this.flush);
  }

  private readonly flush = (): void => {
    if (this.closed) return;
    this.blocked = false;
    let index = 0;
    while (index < this.queue.length) {
      const frame = this.queue[index] as string;
      this.written = this.queuePositions[index] as bigint;
      index += 1;
      this.observer?.sent(1);
      if (!this.sink.write(frame)) {
        this.queue = this.queue.slice(index);
        this.queuePositions = this.queuePositions.slice(index);
        this.block();
        return;
      }
    }
    this.queue = [];
    this.queuePositions = [];
    this.drained?.();
  };
}


/**
 * Whether a stream must start with a reset, and where: a malformed Last-Event-ID, or a position past the last
 * written or in a restore's gap (`unknown_position`), or older than the oldest kept minus one (`expired`). Facts of
 * the store, not of a tenant: positions are store-wide, and pruning is by age for every tenant at once.
 */
export async function resetOf(log: Pick<PlantEventLog, 'eventBounds'>, start: StreamStart): Promise<{ pos: bigint; reason: string } | undefined> {
  if (start.malformed === true) return { pos: (await log.eventBounds()).last, reason: 'unknown_position' };
  if (start.after === undefined) return undefined;
  const { oldest, last, unwritten } = await log.eventBounds(start.after);
  // Positions have no gaps: resuming after `after` needs every event from after + 1 still kept.
  if (start.after > last || unwritten === true) return { pos: last, reason: 'unknown_position' };
  if (start.after < (oldest ?? last + 1n) - 1n) return { pos: last, reason: 'expired' };
  return undefined;
}

