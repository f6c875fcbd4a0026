/**
 * The restore mark of a SQLite store (migrations/sqlite/007): a store whose plants came from a backup or an
 * export continues its positions after every position the store it replaces may have handed out, so no ETag and
 * no feed position comes back. Runs inside the caller's write transaction; SQL only.
 */
import type Database from 'better-sqlite3';

const LAST_POSITION = "SELECT seq FROM sqlite_sequence WHERE name = 'plant_events'";

/** The last position a store handed out (AUTOINCREMENT's record); 0 when it has none. */
export function lastPosition(db: Database.Database): bigint {
  const seq = db.prepare(LAST_POSITION).pluck().safeIntegers(true).get() as bigint | undefined;
  return seq ?? 0n;
}

/**
 * Moves the store's positions past `handedOut` (the last position the replaced store handed out, when known) and
 * past the time in microseconds since 1970, the floor when that store is gone: a store hands out far fewer than a
 * million positions a second, so its positions stay below the time of any later restore (and below 2^53 until
 * 2255, so readers that hold positions as numbers keep them exact). Records the mark after the store's own last
 * position, so a reader resuming from a position in between gets a reset. Returns the mark: the next event is mark + 1.
 */
export function markPositions(db: Database.Database, handedOut: bigint, at: Date): bigint {
  const own = lastPosition(db);
  const clock = BigInt(at.getTime()) * 1000n;
  const mark = [own + 1n, handedOut + 1n, clock].reduce((a, b) => (a > b ? a : b));
  const moved = db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'plant_events'").run(mark).changes;
  if (moved === 0) db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('plant_events', ?)").run(mark);
  db.prepare('INSERT INTO plant_event_restores (mark, restored_last, restored_at) VALUES (?, ?, ?)').run(mark, own, at.getTime());
  return mark;
}
