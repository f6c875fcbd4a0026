/**
 * The start order on SQLite at WORKERS above 1 (docs/decisions/workers.md): slot 1 forks alone and the others
 * only once it listens, so the migrations, the search-key fill and the lost-store check run in one process, never
 * two racing for the file's write lock (on PostgreSQL the advisory lock orders them; every slot forks at once).
 * Knows the dialect only: loads nothing of the store.
 */
import type { Config } from '../config';

/** True when slot 1 must start, migrate and listen before any other slot forks. */
export function startsAlone(database: Config['database']): boolean {
  return database.dialect === 'sqlite';
}

/** The slots to fork at the supervisor's start: slot 1 alone on SQLite, every one otherwise. */
export function firstForks<S extends { n: number }>(database: Config['database'], slots: readonly S[]): readonly S[] {
  return startsAlone(database) ? slots.filter((slot) => slot.n === 1) : slots;
}
