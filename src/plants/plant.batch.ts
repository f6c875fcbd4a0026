/**
 * POST /plants/batch at the edge: the body parsed into the writes the write rule takes (each operation with the
 * create's, PATCH's or PUT's own schema, so its rules and codes are the ones the operation has alone), and the
 * results written as JSON text. No store and no rule here.
 */
import type { z } from 'zod';
import { AppError, type FieldProblem, type Reason } from '../errors';
import { invalid } from '../http/input';
import { etagJson, expectedVersions, putExpected, versionDigits, type VersionText } from './plant.etags';
import { newPlantJson, plantBodyJson, plantJson } from './plant.json';
import type { WriteOutcome } from './plant.repository';
import { newPlantSchema, plantIdSchema, plantPatchSchema, putPlantSchema } from './plant.schemas';
import type { PlantWrite } from './plant.write-rule';

export const BATCH_MAX = 1000;
const OPS: readonly string[] = ['create', 'update', 'put', 'delete'];
type Op = Record<string, unknown>;

/** A 400 about one operation's member, naming `operations[index].member…` in its field and message. */
function refuse(reason: Reason, index: number, member: string, code: FieldProblem['code'], message: string): AppError {
  const field = `operations[${index}]${member === '' ? '' : `.${member}`}`;
  return new AppError(reason, `${field}: ${message}`, { operation: index, fields: [{ field, code, message }] });
}

const isObject = (value: unknown): value is Op => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` parsed by `schema`, or a 40006 whose fields say where in the batch each problem sits. */
function parsed<T>(schema: z.ZodType<T>, value: unknown, index: number, member: string): T {
  if (!isObject(value)) throw refuse('invalid_field', index, member, value === undefined ? 'required' : 'type', 'must be a JSON object');
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = (invalid('invalid_field', result.error, value).fields ?? []).map((problem) => ({ ...problem, field: `operations[${index}].${member}.${problem.field}` }));
  throw new AppError('invalid_field', fields.map(({ field, message }) => `${field}: ${message}`).join('; '), { operation: index, fields });
}

function idOf(op: Op, index: number): bigint {
  const result = plantIdSchema.safeParse(op.id);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw refuse('invalid_field', index, 'id', op.id === undefined ? 'required' : 'type', issue?.message ?? 'is not valid');
}

/** An entity-tag member (ifMatch, ifNoneMatch): a string as its header would carry it, when present. */
function tagOf(op: Op, index: number, member: 'ifMatch' | 'ifNoneMatch'): string | undefined {
  const value = op[member];
  if (value === undefined || typeof value === 'string') return value;
  throw refuse('invalid_field', index, member, 'type', 'must be a string, as the header would carry it ("42", or *)');
}

/** A body's id, when sent, must be the operation's. */
function sameId(id: bigint, bodyId: bigint | undefined, index: number, member: string): void {
  if (bodyId !== undefined && bodyId !== id) throw refuse('invalid_field', index, `${member}.id`, 'mismatch', `must be the operation's id (${id}), or left out; an id cannot be changed`);
}

function writeOf(op: Op, index: number): PlantWrite {
  if (op.op === 'create') return { kind: 'create', plant: parsed(newPlantSchema, op.plant, index, 'plant') };
  const id = idOf(op, index);
  const ifMatch = tagOf(op, index, 'ifMatch');
  if (op.op === 'delete') return { kind: 'delete', id, expected: expectedVersions(ifMatch) };
  if (op.op === 'update') {
    const { id: bodyId, ...patch } = parsed(plantPatchSchema, op.patch, index, 'patch');
    sameId(id, bodyId, index, 'patch');
    return { kind: 'update', id, patch, expected: expectedVersions(ifMatch) };
  }
  const ifNoneMatch = tagOf(op, index, 'ifNoneMatch');
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*') throw refuse('invalid_field', index, 'ifNoneMatch', 'unknown_value', 'must be * (create only) or left out');
  const { id: bodyId, ...plant } = parsed(putPlantSchema, op.plant, index, 'plant');
  sameId(id, bodyId, index, 'plant');
  return { kind: 'put', id, plant, expected: putExpected(ifMatch, ifNoneMatch !== undefined) };
}

/** The body's operations as writes, in order; the first problem found is the answer (40050, 40051, 40006). */
export function parseBatch(body: Record<string, unknown>): PlantWrite[] {
  const { operations } = body;
  if (!Array.isArray(operations)) {
    const message = `must be an array of 1 to ${BATCH_MAX} operations`;
    throw new AppError('invalid_batch', `operations: ${message}`, { fields: [{ field: 'operations', code: operations === undefined ? 'required' : 'type', message }] });
  }
  if (operations.length === 0) {
    const message = `must hold 1 to ${BATCH_MAX} operations`;
    throw new AppError('invalid_batch', `operations: ${message}`, { fields: [{ field: 'operations', code: 'too_short', message }] });
  }
  if (operations.length > BATCH_MAX) {
    const message = `holds ${operations.length} operations; a batch holds at most ${BATCH_MAX}: split it`;
    throw new AppError('too_many_operations', `operations: ${message}`, { fields: [{ field: 'operations', code: 'out_of_range', message }] });
  }
  return operations.map((op: unknown, index) => {
    if (!isObject(op)) throw refuse('invalid_batch', index, '', 'type', 'must be a JSON object');
    if (typeof op.op !== 'string' || !OPS.includes(op.op)) {
      throw refuse('invalid_batch', index, 'op', op.op === undefined ? 'required' : 'unknown_value', 'must be one of create, update, put, delete');
    }
    return writeOf(op, index);
  });
}

/**
 * One operation's result as it would have answered alone: its status, its ETag where it has one, and its body
 * where it has one (an update's only for a caller that may read, as PATCH answers 204 otherwise).
 */
function resultJson(write: PlantWrite, outcome: WriteOutcome, mayRead: boolean, text: VersionText): string {
  if (!('stored' in outcome)) return '{"status":204}';
  const etag = etagJson(outcome.version, text);
  if (write.kind === 'create') return `{"status":200,"etag":${etag},"plant":${plantBodyJson(outcome.stored)}}`;
  if (write.kind === 'put') return `{"status":${outcome.outcome === 'created' ? 201 : 200},"etag":${etag},"plant":${newPlantJson(outcome.stored)}}`;
  return mayRead ? `{"status":200,"etag":${etag},"plant":${plantJson(outcome.stored)}}` : `{"status":204,"etag":${etag}}`;
}

/** The 200's body: `{"results": [...]}`, one per operation in order. */
export function batchJson(writes: readonly PlantWrite[], outcomes: readonly WriteOutcome[], mayRead: boolean, text: VersionText = versionDigits): string {
  return `{"results":[${outcomes.map((outcome, index) => resultJson(writes[index] as PlantWrite, outcome, mayRead, text)).join(',')}]}`;
}
