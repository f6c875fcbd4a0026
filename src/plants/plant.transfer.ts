/**
 * The plant's NDJSON lines and how an import refuses one: the shared half of each dialect's transfer
 * (plant.transfer.sqlite.ts, plant.transfer.postgres.ts). One plant a line, {"id":…,"name":…,"tag":…,"createdAt":…,
 * "updatedAt":…}, the tag left out when absent, a tenant other than the shared one named first ({"tenant":…,
 * "id":…}), the id as a JSON integer digit for digit (plantLine writes it). Each line is read with the service's
 * lossless JSON parse and checked by the same rules as POST /plants, so an import stores only what the
 * API would. src/backup reads and writes the files and streams around them (src/transfer.ts).
 */
import { SHARED_TENANT, TENANT_NAME_MAX, tenantKeyOf, type TenantKey } from '../tenant';
import { parseJson } from '../http/parse-json';
import { ImportError, type Lines } from '../transfer';
import { plantLine } from './plant.json';
import type { MemberColumns, Stamps, StoredPlant } from './plant.members';
import { newPlantSchema, type NewPlant } from './plant.schemas';

// Rows per page of an export and per statement of a PostgreSQL import: large enough that round trips do not
// dominate, small enough that memory stays flat.
export const PAGE_ROWS = 5000;

/** A plant as an export reads it: NULL for an absent member; its tenant's key when the store keeps tenants. */
export type PlantRow = { tenant?: string; id: bigint } & MemberColumns;

/** How a line that meets a stored plant with the same id (in its tenant, which the stored line names) but other fields is refused. */
export function conflictMessage(line: number, incoming: NewPlant, stored: StoredPlant & { tenant?: string }): string {
  return (
    `line ${line}: plant ${incoming.id} is stored as ${plantLine(stored).trim()}, ` +
    'and this line differs; nothing was imported'
  );
}

/** A time as export lines carry it (plant.json.ts): RFC 3339 in UTC with milliseconds, a real instant. */
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isTime = (value: unknown): value is string => typeof value === 'string' && TIME.test(value) && new Date(value).toISOString() === value;

/**
 * The times a line carries, kept by the import (a plant moved between stores keeps when it was created and last
 * changed); none, and the plant is created at the import's time. Both or neither, each as an export writes it.
 */
function stampsOf(value: Record<string, unknown>, line: number): Stamps | undefined {
  const { createdAt, updatedAt } = value;
  if (createdAt === undefined && updatedAt === undefined) return undefined;
  if (!isTime(createdAt) || !isTime(updatedAt)) {
    throw new ImportError(`line ${line}: createdAt and updatedAt must both be RFC 3339 times in UTC with milliseconds (2026-11-27T09:41:07.250Z), or both left out`);
  }
  return { createdAt, updatedAt };
}

/**
 * The tenant a line names, as its stored key: none is the shared tenant; a name is 1 to 255 characters, and the
 * target's TENANT_DEFAULT name (`defaultName`) is the shared key, as a request's would be (src/tenant.ts).
 */
function tenantOf(value: Record<string, unknown>, line: number, defaultName: string | undefined): TenantKey {
  const { tenant } = value;
  if (tenant === undefined) return SHARED_TENANT;
  if (typeof tenant !== 'string' || tenant.length === 0 || tenant.length > TENANT_NAME_MAX) {
    throw new ImportError(`line ${line}: tenant must be a tenant's name, a string of 1 to ${TENANT_NAME_MAX} characters, or left out for the default tenant`);
  }
  return tenantKeyOf(tenant, defaultName);
}

/** A line's plant, as POST /plants would take it, the tenant it goes to and the times it carries. */
export type ImportedPlant = { tenant: TenantKey; plant: NewPlant; stamps?: Stamps };

/** `defaultName`: the target's TENANT_DEFAULT, whose lines go to the shared tenant. */
export function parsePlantLine(text: string, line: number, defaultName?: string): ImportedPlant {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new ImportError(`line ${line}: not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ImportError(`line ${line}: must be a JSON object {"id":…,"name":…,"tag":…}`);
  }
  const tenant = tenantOf(value as Record<string, unknown>, line, defaultName);
  const parsed = newPlantSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'plant'} ${issue.message}`).join('; ');
    throw new ImportError(`line ${line}: ${issues}`);
  }
  const stamps = stampsOf(value as Record<string, unknown>, line);
  return stamps === undefined ? { tenant, plant: parsed.data } : { tenant, plant: parsed.data, stamps };
}

/** The plants of an import's lines, each parsed as it is read; `defaultName` as parsePlantLine takes it. */
export async function* plantsOf(lines: Lines, defaultName?: string): AsyncGenerator<[ImportedPlant, number]> {
  for await (const [text, line] of lines) yield [parsePlantLine(text, line, defaultName), line];
}
