/**
 * A plant's members after its id, read from the published schema (storedPlantSchema) in its order: the one list
 * every store, the write rule and the change events follow. Each member has a column of its own on `plants` and
 * on `plant_events`, named by `columnOf`; a member the schema marks optional may be absent (a NULL column). Two
 * kinds: what a client writes (the members NewPlant has: name, tag), and the times the store stamps on each
 * change (createdAt, updatedAt, decided by the write rule). A new optional member a client writes is its schema
 * entries, its JSON writer entry (plant.json.ts) and a migration per dialect (docs/architecture.md walks it);
 * nothing here or in the stores names one.
 */
import { z } from 'zod';
import { newPlantSchema, searchKey, storedPlantSchema } from './plant.schemas';

type Shape = typeof storedPlantSchema.shape;

/** A member's name: `name`, `tag`, … (not `id`). */
export type Member = Exclude<keyof Shape, 'id'>;

/** A stored plant's members, absent when the schema lets them be. */
export type PlantMembers = Omit<z.infer<typeof storedPlantSchema>, 'id'>;

/** A plant as the store holds it: its int64 id and its members. */
export type StoredPlant = { id: bigint } & PlantMembers;

/** The members as a row holds them: NULL for an absent one. */
export type MemberColumns = { [M in Member]-?: Exclude<PlantMembers[M], undefined> | null };

/** Every member, in the schema's order (the order the JSON writer writes them). */
export const MEMBERS = Object.keys(storedPlantSchema.shape).filter((key): key is Member => key !== 'id');

/** The members a plant may lack. */
export const OPTIONAL_MEMBERS = MEMBERS.filter((member) => storedPlantSchema.shape[member] instanceof z.ZodOptional);

/** The members a client writes (those a NewPlant has), in the schema's order: what a create or an edit sets. */
export type WritableMember = Extract<Member, keyof typeof newPlantSchema.shape>;
export const WRITABLE_MEMBERS = MEMBERS.filter((member): member is WritableMember => member in newPlantSchema.shape);

/** The times the store stamps on each change; a client never sends them. */
export type Stamps = Pick<PlantMembers, 'createdAt' | 'updatedAt'>;

/** The time of a commit as plants carry it: RFC 3339, UTC, milliseconds (storedPlantSchema's createdAt). */
export const timeText = (ms: number): string => new Date(ms).toISOString();

/**
 * Columns of `plants` that no answer carries, derived from a member when a plant is written: `name_key`, the
 * name's search key (plant.schemas.ts searchKey), which `q` matches and `sort=name` orders by. Computed by the
 * service, never by a database, so both stores hold the same bytes.
 */
export const DERIVED_COLUMNS = ['name_key'] as const;
export const derivedValues = (plant: Pick<PlantMembers, 'name'>): unknown[] => [searchKey(plant.name)];

/** A member's column: its name in snake_case (`tag`, or `created_at` for a `createdAt`). */
export const columnOf = (member: Member): string => member.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** The members' columns for a SELECT, each named as its member (`created_at AS "createdAt"`), after `prefix` (`p.`). */
export const selectMembers = (prefix = ''): string =>
  MEMBERS.map((member) => (columnOf(member) === member ? `${prefix}${member}` : `${prefix}${columnOf(member)} AS "${member}"`)).join(', ');

/** The members' columns, comma-separated, for an INSERT's column list. */
export const MEMBER_COLUMNS = MEMBERS.map(columnOf).join(', ');

/** A plant's member values in MEMBERS order, NULL for an absent one: a write statement's parameters. */
export const columnValues = (plant: PlantMembers | Partial<MemberColumns>): unknown[] => MEMBERS.map((member) => plant[member] ?? null);

/** The plant a row holds: a NULL column is an absent member. */
export function plantOfRow(id: bigint, row: Partial<MemberColumns>): StoredPlant {
  const plant = { id } as Record<string, unknown>;
  for (const member of MEMBERS) {
    const value = row[member];
    if (value !== null && value !== undefined) plant[member] = value;
  }
  return plant as StoredPlant;
}
