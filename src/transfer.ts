/**
 * What export and import hand each other, whatever resource they carry: a resource's transfer functions produce
 * and answer these, src/backup opens the files, connections and transactions around them. Ground floor: it
 * imports nothing.
 */

export type Export = {
  /** Records in the snapshot the export reads: the count a copy checks the import against. */
  total: number;
  /** The records as NDJSON text, a page at a time, in id order; the snapshot ends when the iteration does. */
  chunks: () => AsyncIterable<string> | Iterable<string>;
};

export type ImportResult = {
  /** Lines read, one record each. */
  lines: number;
  /** Records that were not stored and now are. */
  inserted: number;
  /** Lines equal to a record already stored: an import run twice changes nothing. */
  unchanged: number;
  /** Records in the store before and after. */
  before: number;
  after: number;
};

/** The lines of an import: [text, 1-based line number]. */
export type Lines = AsyncIterable<[string, number]>;

/** An import that cannot go on: the message says which line and why; nothing was imported. */
export class ImportError extends Error {}
