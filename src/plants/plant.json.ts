/**
 * The plant's one JSON writer. Every TypeScript path that writes a plant calls it: API answers, the change feed,
 * webhook bodies, export lines. JSON.stringify throws on a bigint, and turning the id into a number first would
 * round it past 2^53 (9007199254740993 would become …992), so the id is written as its decimal digits, a JSON
 * integer; strings go through JSON.stringify, which escapes them as JSON requires. Members come in one order (id,
 * name, tag) and an absent optional member is left out, never written as null.
 *
 * One rendering of the same text runs in a database, for a measured reason: SQLite's reads (no row object or
 * bigint per plant). It is built below from column expressions, and tests/store/plant-json.test.ts holds its bytes
 * to these functions' for the int64 edges and the strings a name may hold. A new member is written in both.
 */

/** What the writer reads: a stored plant, a NewPlant, or a row straight from a store (`tag` null when absent). */
export type PlantFields = { id: bigint; name: string; tag?: string | null };

// The members after the id, shared by the forms with and without it. `== null`: absent, whether undefined or a row's null.
const members = (plant: Omit<PlantFields, 'id'>): string =>
  plant.tag == null ? `"name":${JSON.stringify(plant.name)}` : `"name":${JSON.stringify(plant.name)},"tag":${JSON.stringify(plant.tag)}`;

/** A StoredPlant `{id, name, tag?}`: GET /plants/{id}, PATCH's answer, the feed's data, webhook bodies. */
export const plantJson = (plant: PlantFields): string => `{"id":${plant.id},${members(plant)}}`;

/** A Plant `{name, tag?}`, never the id: the answer to POST /plants. */
export const plantBodyJson = (plant: Omit<PlantFields, 'id'>): string => `{${members(plant)}}`;

/** A deleted plant, `{id}` alone: the feed's and the webhook's data for a delete. */
export const deletedPlantJson = (id: bigint): string => `{"id":${id}}`;

/** One export line: the StoredPlant form and a newline (NDJSON). */
export const plantLine = (plant: PlantFields): string => `${plantJson(plant)}\n`;

export function plantsJson(plants: readonly PlantFields[]): string {
  let text = '[';
  for (let index = 0; index < plants.length; index += 1) {
    if (index > 0) text += ',';
    text += plantJson(plants[index] as PlantFields);
  }
  return `${text}]`;
}

/** SQL expressions that hold a plant's members, one per member of PlantFields. */
export type PlantColumns = { [Member in keyof PlantFields]-?: string };

/**
 * plantJson's text, written by SQLite: json_object writes integers digit for digit and escapes strings as
 * JSON.stringify does. One json_object per shape rather than concatenation with json_quote (which would take
 * any number of optional members without an arm each): that measured a quarter to a half slower on a page.
 */
export const plantJsonSqlite = (c: PlantColumns): string =>
  `CASE WHEN ${c.tag} IS NULL THEN json_object('id', ${c.id}, 'name', ${c.name}) ` +
  `ELSE json_object('id', ${c.id}, 'name', ${c.name}, 'tag', ${c.tag}) END`;
