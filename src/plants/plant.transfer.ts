/**
 * What export and import hand each other, whatever the store, and how an import refuses a plant: the shared half
 * of each dialect's transfer (plant.transfer.sqlite.ts, plant.transfer.postgres.ts). src/backup reads and writes
 * the files and streams around them.
 */
import { plantLine } from './plant.json';
import type { NewPlant } from './plant.schemas';

export type PlantExport = {
  /** Plants in the snapshot the export reads: the count a copy checks the import against. */
  total: number;
  /** The plants as NDJSON text, a page at a time, in id order; the snapshot ends when the iteration does. */
  chunks: () => AsyncIterable<string> | Iterable<string>;
};

export type ImportResult = {
  /** Lines read, one plant each. */
  lines: number;
  /** Plants that were not stored and now are. */
  inserted: number;
  /** Lines equal to a plant already stored: an import run twice changes nothing. */
  unchanged: number;
  /** Plants in the store before and after. */
  before: number;
  after: number;
};

// Rows per page of an export and per statement of a PostgreSQL import: large enough that round trips do not
// dominate, small enough that memory stays flat.
export const PAGE_ROWS = 5000;

/** An import that cannot go on: the message says which line and why; nothing was imported. */
export class ImportError extends Error {}

/** A plant as an export reads it: `tag` null when absent. */
export type PlantRow = { id: bigint; name: string; tag: string | null };

/** How a line that meets a stored plant with the same id but other fields is refused. */
export function conflictMessage(line: number, incoming: NewPlant, stored: { name: string; tag: string | null }): string {
  return (
    `line ${line}: plant ${incoming.id} is stored as ${plantLine({ id: incoming.id, ...stored }).trim()}, ` +
    'and this line differs; nothing was imported'
  );
}
