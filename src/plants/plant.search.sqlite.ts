/**
 * The SQLite search index (migrations/sqlite/010): an FTS5 trigram table of plants.name_key, written behind the
 * commits by this indexer, never inside one, so a create pays nothing for it. It follows the change events: each
 * plant an event after `indexed_pos` names is indexed again from its row as it is now. A search uses the index for
 * what it covers and reads the plants of the events after `indexed_pos` directly (plant.list.sqlite.ts), so an
 * answer is never behind the rows. When the events it needs were pruned, or it was never built, it builds from the
 * plants table, 1,000 plants a turn, and searches scan meanwhile. Runs on the repository's connection between
 * commits; a failure (a lock held by `plant-store import`) is retried on the next wake-up. SQL only.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../db/database.sqlite';
import type { Logger } from '../logger';
import type { ChangeSignal } from './plant.events';

// Events a turn: one short transaction each, so a commit never waits long behind the indexer.
const EVENTS_PER_TURN = 1000;
// A build turn blocks the event loop while it runs: 5,000 plants took up to 190 ms on a loaded 2-core VM.
const PLANTS_PER_TURN = 1000;
const POLL_MS = 1000;

type State = { indexed_pos: bigint | null; build_pos: bigint | null; build_after_id: bigint | null };

export class SqliteSearchIndex {
  private readonly state: Database.Statement<[], State>;
  private readonly oldest: Database.Statement<[], bigint | null>;
  private readonly lastWritten: Database.Statement<[], bigint | undefined>;
  private readonly changed: Database.Statement<[bigint, number], { pos: bigint; plant_id: bigint }>;
  private readonly remove: Database.Statement<[bigint]>;
  private readonly add: Database.Statement<[bigint]>;
  private readonly chunk: Database.Statement<[bigint, number], { id: bigint; name_key: string | null }>;
  private readonly firstChunk: Database.Statement<[number], { id: bigint; name_key: string | null }>;
  private readonly addKey: Database.Statement<[bigint, string]>;
  private readonly save: Database.Statement<[bigint | null, bigint | null, bigint | null]>;
  private readonly turn: Database.Transaction<() => boolean>;
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {
    this.state = db.prepare<[], State>('SELECT indexed_pos, build_pos, build_after_id FROM plants_search_state');
    this.oldest = db.prepare<[], bigint | null>('SELECT min(pos) FROM plant_events').pluck();
    this.lastWritten = db.prepare<[], bigint | undefined>("SELECT seq FROM sqlite_sequence WHERE name = 'plant_events'").pluck();
    this.changed = db.prepare<[bigint, number], { pos: bigint; plant_id: bigint }>('SELECT pos, plant_id FROM plant_events WHERE pos > ? ORDER BY pos LIMIT ?');
    this.remove = db.prepare<[bigint]>('DELETE FROM plants_search WHERE rowid = ?');
    this.add = db.prepare<[bigint]>('INSERT INTO plants_search (rowid, name_key) SELECT id, name_key FROM plants WHERE id = ? AND name_key IS NOT NULL');
    this.chunk = db.prepare<[bigint, number], { id: bigint; name_key: string | null }>('SELECT id, name_key FROM plants WHERE id > ? ORDER BY id LIMIT ?');
    this.firstChunk = db.prepare<[number], { id: bigint; name_key: string | null }>('SELECT id, name_key FROM plants ORDER BY id LIMIT ?');
    this.addKey = db.prepare<[bigint, string]>('INSERT INTO plants_search (rowid, name_key) VALUES (?, ?)');
    this.save = db.prepare<[bigint | null, bigint | null, bigint | null]>('UPDATE plants_search_state SET indexed_pos = ?, build_pos = ?, build_after_id = ?');
    // One turn in one write transaction: the index and the position it covers move together.
    this.turn = db.transaction(() => this.step());
  }

  /**
   * The position the index covers, for a search in the caller's read transaction; undefined while it cannot serve
   * (building, or the events after it are no longer all kept), and the search scans.
   */
  indexedUpTo(): bigint | undefined {
    const { indexed_pos: indexed } = this.state.get() as State;
    if (indexed === null) return undefined;
    const oldest = this.oldest.get() ?? null;
    const last = this.lastWritten.get() ?? 0n;
    if (indexed >= last || (oldest !== null && oldest <= indexed + 1n)) return indexed;
    return undefined;
  }

  /** Follows the commits (`changes`) and polls for writes of other processes; returns at once. */
  start(changes: ChangeSignal): void {
    this.unsubscribe = changes(() => this.wake());
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe = undefined;
  }

  /** Runs turns, one per event-loop turn, until there is nothing left to index. */
  private wake(): void {
    if (this.scheduled || this.unsubscribe === undefined) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      let more = false;
      try {
        more = this.turn.immediate();
      } catch (err) {
        this.logger.debug({ err }, 'search index cannot be written now; retrying on the next wake-up');
      }
      if (more) this.wake();
    });
  }

  /** One turn: a chunk of the build, or a page of events. Answers whether more is waiting. */
  private step(): boolean {
    const state = this.state.get() as State;
    if (state.build_pos !== null) return this.buildChunk(state.build_pos, state.build_after_id);
    if (this.indexedUpTo() === undefined) {
      // Never built, or the events it needs were pruned: from the plants, as they are from this position on.
      this.db.prepare('DELETE FROM plants_search').run();
      this.save.run(null, this.lastWritten.get() ?? 0n, null);
      return true;
    }
    const indexed = state.indexed_pos as bigint;
    const events = this.changed.all(indexed, EVENTS_PER_TURN);
    const last = events.at(-1);
    if (last === undefined) return false;
    for (const id of new Set(events.map((event) => event.plant_id))) {
      this.remove.run(id);
      this.add.run(id);
    }
    this.save.run(last.pos, null, null);
    return events.length === EVENTS_PER_TURN;
  }

  /** Indexes the next plants by id; the last chunk makes the index serve from the build's position. */
  private buildChunk(buildPos: bigint, afterId: bigint | null): boolean {
    const plants = afterId === null ? this.firstChunk.all(PLANTS_PER_TURN) : this.chunk.all(afterId, PLANTS_PER_TURN);
    for (const plant of plants) if (plant.name_key !== null) this.addKey.run(plant.id, plant.name_key);
    const last = plants.at(-1);
    // Changes made during the build are events after buildPos: the catch-up indexes those plants again.
    if (last === undefined || plants.length < PLANTS_PER_TURN) this.save.run(buildPos, null, null);
    else this.save.run(null, buildPos, last.id);
    return true;
  }
}
