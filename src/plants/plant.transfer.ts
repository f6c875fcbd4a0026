/**
 * The plant's NDJSON lines and how an import refuses one: the shared half of each dialect's transfer
 * (plant.transfer.sqlite.ts, plant.transfer.postgres.ts). One plant a line, {"id":…,"name":…,"tag":…}, the tag
 * left out when absent, the id as a JSON integer digit for digit (plantLine writes it). Each line is read with the
 * service's lossless JSON parse and checked by the same rules as POST /plants, so an import stores only what the
 * API would. src/backup reads and writes the files and streams around them (src/transfer.ts).
 */
import { parseJson } from '../http/parse-json';
import { ImportError, type Lines } from '../transfer';
import { plantLine } from './plant.json';
import type { MemberColumns, StoredPlant } from './plant.members';
import { newPlantSchema, type NewPlant } from './plant.schemas';

// Rows per page of an export and per statement of a PostgreSQL import: large enough that round trips do not
// dominate, small enough that memory stays flat.
export const PAGE_ROWS = 5000;

/** A plant as an export reads it: NULL for an absent member. */
export type PlantRow = { id: bigint } & MemberColumns;

/** How a line that meets a stored plant with the same id but other fields is refused. */
export function conflictMessage(line: number, incoming: NewPlant, stored: StoredPlant): string {
  return (
    `line ${line}: plant ${incoming.id} is stored as ${plantLine(stored).trim()}, ` +
    'and this line differs; nothing was imported'
  );
}

export function parsePlantLine(text: string, line: number): NewPlant {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new ImportError(`line ${line}: not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ImportError(`line ${line}: must be a JSON object {"id":…,"name":…,"tag":…}`);
  }
  const parsed = newPlantSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'plant'} ${issue.message}`).join('; ');
    throw new ImportError(`line ${line}: ${issues}`);
  }
  return parsed.data;
}

/** The plants of an import's lines, each parsed as it is read. */
export async function* plantsOf(lines: Lines): AsyncGenerator<[NewPlant, number]> {
  for await (const [text, line] of lines) yield [parsePlantLine(text, line), line];
}
