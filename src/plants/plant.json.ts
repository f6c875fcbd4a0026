import type { StoredPlant } from './plant.repository';

/*
 * JSON text of plants with exact int64 ids. JSON.stringify throws on a bigint, and turning the id into a number
 * first would round it past 2^53 (9007199254740993 would become …992). The id is written as its decimal digits,
 * a JSON integer; strings still go through JSON.stringify, which escapes them as JSON requires.
 */

export function plantJson(plant: StoredPlant): string {
  const head = `{"id":${plant.id.toString()},"name":${JSON.stringify(plant.name)}`;
  return plant.tag === undefined ? `${head}}` : `${head},"tag":${JSON.stringify(plant.tag)}}`;
}

export function plantsJson(plants: readonly StoredPlant[]): string {
  let text = '[';
  for (let index = 0; index < plants.length; index += 1) {
    if (index > 0) text += ',';
    text += plantJson(plants[index] as StoredPlant);
  }
  return `${text}]`;
}

// U+2028 and U+2029 (Unicode's line and paragraph separators) and U+0085 (NEL) may stand raw in a JSON string,
// but a reader that splits lines the Unicode way (Python's str.splitlines, several SSE libraries) ends a `data:`
// line there and reads what follows as a field of its own: a forged event. CR and LF cannot reach here raw, as
// every JSON writer (JSON.stringify, SQLite's json_object, PostgreSQL's to_json) escapes control characters.
const LINE_SEPARATORS = /[\u0085\u2028\u2029]/g;
const ESCAPED: Record<string, string> = { '\u0085': '\\u0085', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** JSON text as it goes on the wire (an SSE `data:` line, a webhook body): the same value, no raw line separator. */
export const escapeLineSeparators = (json: string): string => json.replace(LINE_SEPARATORS, (separator) => ESCAPED[separator] as string);
