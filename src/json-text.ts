/**
 * JSON text as it goes on the wire, whatever it holds: the last step before a resource's JSON becomes an SSE
 * `data:` line or a webhook body. Ground floor: it imports nothing.
 */

// U+2028 and U+2029 (Unicode's line and paragraph separators) and U+0085 (NEL) may stand raw in a JSON string,
// but a reader that splits lines the Unicode way (Python's str.splitlines, several SSE libraries) ends a `data:`
// line there and reads what follows as a field of its own: a forged event. CR and LF cannot reach here raw, as
// every JSON writer (JSON.stringify, SQLite's json_object, PostgreSQL's to_json) escapes control characters.
const LINE_SEPARATORS = /[\u0085\u2028\u2029]/g;
const ESCAPED: Record<string, string> = { '\u0085': '\\u0085', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** JSON text as it goes on the wire (an SSE `data:` line, a webhook body): the same value, no raw line separator. */
export const escapeLineSeparators = (json: string): string => json.replace(LINE_SEPARATORS, (separator) => ESCAPED[separator] as string);
