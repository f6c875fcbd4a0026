import { parse as parseLossless } from 'lossless-json';

// Past these, JSON.parse may round: a digit followed by '.', 'e' or 'E', or 16 digits in a row.
// Their absence proves every number in the text is an integer of at most 15 digits, exact as a double.
// (It may also match inside a string such as "3eggs"; that only costs the slow path.)
const MAYBE_INEXACT = /\d[.eE]|\d{16}/;

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Turns a JSON number's text into its exact value: a number when it is a safe integer, a bigint when it is an
 * integer beyond 2^53, otherwise a double that no integer rule accepts (a fraction, or a magnitude past int64).
 * Integer-valued forms such as 7.0 and 7e2 count as integers, as in JSON Schema.
 */
export function exactNumber(text: string): number | bigint {
  const match = NUMBER.exec(text);
  if (match === null) return Number(text);
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  const significant = (whole + fraction).replace(/^0+/, '');
  const digits = significant.replace(/0+$/, '');
  if (digits === '') return 0;
  const exponent = Number(exponentText) - fraction.length + (significant.length - digits.length);
  if (exponent < 0) {
    // A fraction. Its double may round to an integer (1.0000000000000001 is 1): then NaN, which no rule accepts.
    const nearest = Number(text);
    return Number.isInteger(nearest) ? Number.NaN : nearest;
  }
  // More than 19 digits is beyond int64: the double is enough to refuse it.
  if (digits.length + exponent > 19) return Number(text);
  const magnitude = BigInt(digits) * 10n ** BigInt(exponent);
  const value = sign === '-' ? -magnitude : magnitude;
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

function parseExact(text: string): unknown {
  // A repeated key keeps its last value, as JSON.parse does, so both paths read a body the same way.
  return parseLossless(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/**
 * JSON.parse that keeps integers exact. Throws SyntaxError on malformed text, with lossless-json's message
 * (a position, never a copy of the input).
 */
export function parseJson(text: string): unknown {
  if (MAYBE_INEXACT.test(text)) return parseExact(text);
  try {
    return JSON.parse(text);
  } catch {
    return parseExact(text);
  }
}

/** Deepest nesting of arrays and objects a body may have: far above any plant, far below a stack overflow. */
export const MAX_NESTING = 32;

/**
 * True when the text nests arrays and objects deeper than MAX_NESTING, brackets inside strings not counted.
 * Checked before either parse path runs, so the answer never depends on which path a body takes.
 */
export function nestsTooDeep(text: string): boolean {
  let opening = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) opening += 1;
  }
  // Fewer opening brackets than the limit (a plant has one): no need to follow strings.
  if (opening <= MAX_NESTING) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > MAX_NESTING) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}
