/** What export and import hand each other, whatever the store. */
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
