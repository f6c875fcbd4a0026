/**
 * The NDJSON form of plants that export writes and import reads: one plant a line, {"id":…,"name":…,"tag":…},
 * the tag left out when absent, the id as a JSON integer digit for digit. Each line is read with the service's
 * lossless JSON parse and checked by the same rules as POST /plants, so an import stores only what the API would.
 */
import { parseJson } from '../http/parse-json';
import { newPlantSchema, type NewPlant } from '../plants/plant.schemas';

export class ImportError extends Error {}

export type PlantRow = { id: bigint; name: string; tag: string | null };

export function plantLine(row: PlantRow): string {
  const head = `{"id":${row.id},"name":${JSON.stringify(row.name)}`;
  return row.tag === null ? `${head}}\n` : `${head},"tag":${JSON.stringify(row.tag)}}\n`;
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

// Far above the longest plant line (a 200-character name and a 100-character tag, escaped), far below a memory problem.
export const MAX_LINE_BYTES = 64 * 1024;

/**
 * The lines of a byte stream, in constant memory: UTF-8 checked (a malformed byte fails its line), a final
 * newline optional, \r\n accepted. Yields [text, line number].
 */
export async function* readLines(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): AsyncGenerator<[string, number]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  let line = 0;
  const decode = (chunk: Buffer | string, stream: boolean): string => {
    if (typeof chunk === 'string') return chunk;
    try {
      return decoder.decode(chunk, { stream });
    } catch {
      throw new ImportError(`line ${line + 1 + (pending.match(/\n/g)?.length ?? 0)}: not valid UTF-8`);
    }
  };
  for await (const chunk of input) {
    pending += decode(chunk, true);
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      line += 1;
      yield [lineText(pending.slice(start, end), line), line];
      start = end + 1;
    }
    pending = pending.slice(start);
    if (pending.length > MAX_LINE_BYTES) throw new ImportError(`line ${line + 1}: longer than ${MAX_LINE_BYTES} bytes; one plant per line`);
  }
  pending += decode(Buffer.alloc(0), false);
  if (pending !== '') {
    line += 1;
    yield [lineText(pending, line), line];
  }
}

function lineText(raw: string, line: number): string {
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (text.trim() === '') throw new ImportError(`line ${line}: empty; one plant per line`);
  return text;
}

/** How a line that meets a stored plant with the same id but other fields is refused. */
export function conflictMessage(line: number, incoming: NewPlant, stored: { name: string; tag: string | null }): string {
  return (
    `line ${line}: plant ${incoming.id} is stored as ${plantLine({ id: incoming.id, ...stored }).trim()}, ` +
    'and this line differs; nothing was imported'
  );
}
