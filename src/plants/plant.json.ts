/**
 * The plant's one JSON writer. Every TypeScript path that writes a plant calls it: API answers, the change feed,
 * webhook bodies, export lines. JSON.stringify throws on a bigint, and turning the id into a number first would
 * round it past 2^53 (9007199254740993 would become …992), so the id is written as its decimal digits, a JSON
 * integer; strings go through JSON.stringify, which escapes them as JSON requires. Members come in one order (id,
 * name, tag, createdAt, updatedAt) and an absent optional member is left out, never written as null.
 *
 * One rendering of the same text runs in a database, for a measured reason: SQLite's reads (no row object or
 * bigint per plant). It is built below from the members' list (plant.members.ts), and tests/store/plant-json.test.ts
 * holds its bytes to these functions' for the int64 edges and the strings a name may hold. A new member a client
 * writes is written in `written` alone.
 */
import { columnOf, MEMBERS, OPTIONAL_MEMBERS, type MemberColumns, type StoredPlant } from './plant.members';


/** What the writer reads: a stored plant, a NewPlant, or a row straight from a store (NULL for an absent member). */
export type PlantFields = StoredPlant | ({ id: bigint } & MemberColumns);

/** The members a client writes, after the id: the NewPlant and Plant forms. `== null`: absent, whether undefined or a row's null. */
type Written = { name: string | null; tag?: string | null };
const written = (plant: Written): string =>
  plant.tag == null ? `"name":${JSON.stringify(plant.name)}` : `"name":${JSON.stringify(plant.name)},"tag":${JSON.stringify(plant.tag)}`;

// Every member after the id, in the schema's order: what a client writes, then the times (RFC 3339 text, which
// needs no escaping but is quoted as JSON.stringify would).
const members = (plant: Omit<PlantFields, 'id'>): string => `${written(plant)},"createdAt":"${plant.createdAt}","updatedAt":"${plant.updatedAt}"`;

/** A StoredPlant `{id, name, tag?, createdAt, updatedAt}`: GET /plants/{id}, PATCH's answer, the feed's data, plant.updated bodies. */
export const plantJson = (plant: PlantFields): string => `{"id":${plant.id},${members(plant)}}`;

/** A Plant `{name, tag?}`, never the id nor the times: the answer to POST /plants, as the contract fixed it. */
export const plantBodyJson = (plant: Written): string => `{${written(plant)}}`;

/** A NewPlant `{id, name, tag?}`: the contract's plant.created webhook body. */
export const newPlantJson = (plant: Written & { id: bigint }): string => `{"id":${plant.id},${written(plant)}}`;

/** A deleted plant, `{id}` alone: the feed's and the webhook's data for a delete. */
export const deletedPlantJson = (id: bigint): string => `{"id":${id}}`;

/**
 * One export line: the StoredPlant form and a newline (NDJSON). A plant of a tenant other than the shared one
 * names it first, `{"tenant":"acme","id":…}` (its stored key is its name); the shared tenant's lines, every line of
 * a store with tenants off, are as before.
 */
export const plantLine = (plant: PlantFields & { tenant?: string }): string =>
  plant.tenant === undefined || plant.tenant === '' ? `${plantJson(plant)}\n` : `{"tenant":${JSON.stringify(plant.tenant)},${plantJson(plant).slice(1)}\n`;

export function plantsJson(plants: readonly PlantFields[]): string {
  let text = '[';
  for (let index = 0; index < plants.length; index += 1) {
    if (index > 0) text += ',';
    text += plantJson(plants[index] as PlantFields);
  }
  return `${text}]`;
}

/**
 * plantJson's text, written by SQLite from the columns of `prefix` (`p.`, or none): json_object writes integers
 * digit for digit and escapes strings as JSON.stringify does. One json_object per combination of present optional
 * members (a CASE arm each) rather than concatenation with json_quote (which would take any number of them
 * without an arm each): that measured a quarter to a half slower on a page.
 */
export function plantJsonSqlite(prefix = ''): string {
  const column = (member: string) => `${prefix}${columnOf(member as (typeof MEMBERS)[number])}`;
  const objectOf = (present: ReadonlySet<string>) =>
    `json_object('id', ${prefix}id${MEMBERS.filter((member) => present.has(member) || !OPTIONAL_MEMBERS.includes(member))
      .map((member) => `, '${member}', ${column(member)}`)
      .join('')})`;
  // Each subset of the optional members, by the bits of its number: the arm for that subset present, the rest NULL.
  const arms: string[] = [];
  const subsets = 2 ** OPTIONAL_MEMBERS.length;
  for (let bits = 0; bits < subsets; bits += 1) {
    const present = new Set(OPTIONAL_MEMBERS.filter((_, index) => (bits >> index) & 1));
    const when = OPTIONAL_MEMBERS.map((member) => `${column(member)} IS ${present.has(member) ? 'NOT ' : ''}NULL`).join(' AND ');
    arms.push(bits === subsets - 1 ? `ELSE ${objectOf(present)}` : `WHEN ${when} THEN ${objectOf(present)}`);
  }
  return subsets === 1 ? objectOf(new Set()) : `CASE ${arms.join(' ')} END`;
}
