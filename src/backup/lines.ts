/**
 * The NDJSON lines export writes and import reads, whatever record each holds: one record a line, UTF-8, read in
 * constant memory. What a line means is the resource's to parse (its transfer's import).
 */
import { isUtf8 } from 'node:buffer';
import { ImportError } from '../transfer';

// Far above the longest line a resource writes (a plant: a 200-character name and a 100-character tag, escaped),
// far below a memory problem.
export const MAX_LINE_BYTES = 64 * 1024;

/**
 * The lines of a byte stream, in constant memory: UTF-8 checked line by line (a malformed byte fails the line it is
 * on), a final newline optional, \r\n accepted, a byte order mark at the start skipped. Yields [text, line number].
 * Lines are cut on the byte 0x0A before decoding: it never occurs inside a UTF-8 sequence, so a character split
 * between two chunks stays whole in the bytes carried to the next. `record` names what a line holds, in the
 * messages of a line too long or empty.
 */
export async function* readLines(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, record: string): AsyncGenerator<[string, number]> {
  let pending: Buffer = Buffer.alloc(0);
  let line = 0;
  for await (const chunk of input) {
    const bytes = pending.length === 0 ? toBuffer(chunk) : Buffer.concat([pending, toBuffer(chunk)]);
    const last = bytes.lastIndexOf(0x0a);
    if (last === -1) {
      pending = bytes;
    } else {
      const whole = bytes.subarray(0, last);
      if (!isUtf8(whole)) throw new ImportError(`line ${line + firstInvalidLine(whole)}: not valid UTF-8`);
      const text = whole.toString('utf8');
      let start = line === 0 && text.startsWith(BOM) ? BOM.length : 0;
      for (let end = text.indexOf('\n', start); ; end = text.indexOf('\n', start)) {
        line += 1;
        yield [lineText(text.slice(start, end === -1 ? undefined : end), line, record), line];
        if (end === -1) break;
        start = end + 1;
      }
      pending = bytes.subarray(last + 1);
    }
    if (pending.length > MAX_LINE_BYTES) throw new ImportError(`line ${line + 1}: longer than ${MAX_LINE_BYTES} bytes; one ${record} per line`);
  }
  if (pending.length > 0) {
    if (!isUtf8(pending)) throw new ImportError(`line ${line + 1}: not valid UTF-8`);
    const text = pending.toString('utf8');
    line += 1;
    yield [lineText(line === 1 && text.startsWith(BOM) ? text.slice(BOM.length) : text, line, record), line];
  }
}

const BOM = '\uFEFF';

const toBuffer = (chunk: Buffer | string): Buffer => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk);

/** The 1-based line, among the newline-separated lines of bytes, that holds the first byte UTF-8 does not allow. */
function firstInvalidLine(bytes: Buffer): number {
  let line = 1;
  let start = 0;
  for (let end = bytes.indexOf(0x0a); end !== -1 && isUtf8(bytes.subarray(start, end)); end = bytes.indexOf(0x0a, start)) {
    line += 1;
    start = end + 1;
  }
  return line;
}

function lineText(raw: string, line: number, record: string): string {
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (text.trim() === '') throw new ImportError(`line ${line}: empty; one ${record} per line`);
  return text;
}
