/**
 * Reading a request's input, for any resource: a failed zod parse as the 400 with `fields`, an int64 path
 * parameter, and the percent-decoding checks Express and node:querystring leave out. Throws catalogue errors;
 * knows no resource.
 */
import type { z } from 'zod';
import type { FieldCode } from '../error.schemas';
import { AppError, type FieldProblem, type Reason } from '../errors';

const ownCode = (issue: z.core.$ZodIssue | undefined): FieldCode | undefined =>
  issue?.code === 'custom' ? (issue.params as { code?: FieldCode } | undefined)?.code : undefined;

/**
 * A failed parse as the 400 a form can use: the message names every problem, `fields` lists them one by one.
 * A schema's own rules name their code; what zod finds itself is a missing value, a repeated query parameter or
 * a wrong type, told apart by the value that was sent.
 */
export function invalid(reason: Reason, error: z.ZodError, input: Record<string, unknown>): AppError {
  const fields: FieldProblem[] = error.issues.map((issue) => {
    const value = input[String(issue.path[0])];
    const code: FieldCode = ownCode(issue) ?? (value === undefined ? 'required' : Array.isArray(value) ? 'repeated' : 'type');
    return { field: issue.path.join('.'), code, message: issue.message };
  });
  return new AppError(reason, fields.map(({ field, message }) => `${field}: ${message}`).join('; '), { fields });
}

// At most 18 digits: always inside int64, so BigInt alone parses it. The usual id takes this path; the schema
// (one zod parse and its allocations per request) only sees the rest, to accept or to name what is wrong.
const SURELY_INT64 = /^(?:0|-?[1-9][0-9]{0,17})$/;

/** An int64 path parameter: its text parsed by `schema` (which words the refusal), a 400 naming `name` if it fails. */
export function int64Param(name: string, text: string, schema: z.ZodType<bigint, string>): bigint {
  if (SURELY_INT64.test(text)) return BigInt(text);
  const parsed = schema.safeParse(text);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const code = ownCode(issue) ?? 'type';
    const message = issue?.message ?? 'is not valid';
    throw new AppError('invalid_parameter', `${name}: ${message}`, { fields: [{ field: name, code, message }] });
  }
  return parsed.data;
}

const MALFORMED_ENCODING = 'has malformed percent-encoding; each % must start a UTF-8 byte written as two hex digits (%20, %C3%A9).';

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** A path segment whose `%` is not UTF-8 percent-encoding (`%FF`, `%E0%A4%A`, `%`): a 400 naming the parameter. */
export function rejectMalformedSegment(name: string, segment: string): void {
  if (!decodes(segment)) throw new AppError('invalid_parameter', `${name}: ${MALFORMED_ENCODING}`);
}

/**
 * Express's query parser (node:querystring) turns bytes that are not UTF-8 into U+FFFD without a word, so
 * `?tag=%FF` would search for a value nobody wrote. The raw query is checked first: a 400 naming the parameter.
 */
export function rejectMalformedQuery(url: string): void {
  const start = url.indexOf('?');
  if (start === -1 || !url.includes('%', start)) return;
  for (const pair of url.slice(start + 1).split('&')) {
    if (decodes(pair)) continue;
    const [name = ''] = pair.split('=', 1);
    const label = decodes(name) && name !== '' ? decodeURIComponent(name) : 'a query parameter name';
    throw new AppError('invalid_parameter', `${label}: ${MALFORMED_ENCODING}`);
  }
}
