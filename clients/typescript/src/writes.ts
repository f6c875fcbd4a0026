/**
 * The writes whose bodies the client writes by hand, so every id goes out as its exact digits (JSON.stringify
 * cannot write a bigint): PUT /plants/{id} (create or replace) and POST /plants/batch (all or nothing), each with
 * its Idempotency-Key (http.ts), so both are retried like every call.
 */
import type { Transport } from './http.js';
import type { components } from './openapi.js';
import { parseJson, protocolError, readText, toId, versioned, withEtag, type StoredPlant, type Versioned } from './wire.js';
import type { CallOptions } from './list.js';

type Schemas = components['schemas'];
export type NewPlant = Schemas['NewPlant'];
/** A JSON Merge Patch: members left out keep their value, `tag: null` removes the tag. */
export type PlantPatch = Schemas['PlantPatch'];
/** The whole plant a put stores under its id: a `tag` left out is removed. */
export type PutPlant = { name: string; tag?: string };
/** What a create or put resolves with: the id sent, with the name and tag the service stored. */
export type CreatedPlant = { id: bigint; name: string; tag?: string };
/** A write's options: `idempotencyKey` is sent as given on every try of the call; left out, the client makes one per call. */
export type WriteOptions = CallOptions & { idempotencyKey?: string };
/** `ifMatch`: replace only that version (or `*`, only an existing plant); `ifNoneMatch: '*'`: create only. Otherwise 412 41201. */
export type PutOptions = WriteOptions & { ifMatch?: string; ifNoneMatch?: '*' };
/** The plant as stored (its ETag in `plant.etag`), and whether the put created it (201) or replaced it (200). */
export type PutResult = { plant: Versioned<CreatedPlant>; created: boolean };

/** One operation of a batch, as it would be alone: `ifMatch` as the If-Match header would carry it. */
export type BatchOperation =
  | { op: 'create'; plant: NewPlant }
  | { op: 'update'; id: bigint; patch: PlantPatch; ifMatch?: string }
  | { op: 'put'; id: bigint; plant: PutPlant; ifMatch?: string; ifNoneMatch?: '*' }
  | { op: 'delete'; id: bigint; ifMatch?: string };

/** A create's or a put's result: the plant as stored; a put's status 201 when it created the plant. */
export type WrittenResult = { status: 200 | 201; etag: string; plant: Versioned<CreatedPlant> };
/** An update's result: the plant as stored, or status 204 and no plant for a token without plants:read. */
export type UpdatedResult = { status: 200 | 204; etag: string; plant?: Versioned<StoredPlant> };
export type DeletedResult = { status: 204 };
export type BatchResult = WrittenResult | UpdatedResult | DeletedResult;
/** The result of one operation, by its op. */
export type ResultOf<O extends BatchOperation> = O extends { op: 'delete' } ? DeletedResult : O extends { op: 'update' } ? UpdatedResult : WrittenResult;
/** One result per operation, in order; a tuple of operations gives a tuple of results. */
export type BatchResults<T extends readonly BatchOperation[]> = { -readonly [K in keyof T]: ResultOf<T[K]> };

/** A plant's JSON with its id (when it has one) as exact digits. */
export function plantJson(plant: { id?: bigint | number; name: string; tag?: string }): string {
  const id = plant.id === undefined ? '' : `"id":${toId(plant.id)},`;
  const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{${id}"name":${JSON.stringify(plant.name)}${tag}}`;
}

/** A merge patch's JSON: only the members given, `tag: null` kept. */
export function patchJson(patch: PlantPatch): string {
  const members: string[] = [];
  if (patch.id !== undefined) members.push(`"id":${toId(patch.id)}`);
  if (patch.name !== undefined) members.push(`"name":${JSON.stringify(patch.name)}`);
  if (patch.tag !== undefined) members.push(`"tag":${JSON.stringify(patch.tag)}`);
  return `{${members.join(',')}}`;
}

/** `{ id, name, tag? }`: the id the caller sent, the name and tag as the service stored them. */
export const created = (id: bigint, { name, tag }: { name: string; tag?: string }, etag: string | null | undefined): Versioned<CreatedPlant> =>
  withEtag(tag === undefined ? { id, name } : { id, name, tag }, etag);

function operationJson(operation: BatchOperation): string {
  const { op, ifMatch, ifNoneMatch } = operation as { op: string; ifMatch?: string; ifNoneMatch?: string };
  let text = `{"op":${JSON.stringify(op)}`;
  if (operation.op !== 'create') text += `,"id":${toId(operation.id)}`;
  if (operation.op === 'create' || operation.op === 'put') text += `,"plant":${plantJson(operation.plant)}`;
  if (operation.op === 'update') text += `,"patch":${patchJson(operation.patch)}`;
  if (ifMatch !== undefined) text += `,"ifMatch":${JSON.stringify(ifMatch)}`;
  if (ifNoneMatch !== undefined) text += `,"ifNoneMatch":${JSON.stringify(ifNoneMatch)}`;
  return `${text}}`;
}

type RawResult = { status?: unknown; etag?: string; plant?: Record<string, unknown> };

/** One result with its plant's id the operation's own (exact, as sent), its ETag on the plant too. */
function toResult(operation: BatchOperation, raw: RawResult, response: Response): BatchResult {
  if (typeof raw?.status !== 'number' || (raw.plant !== undefined && (typeof raw.plant !== 'object' || raw.plant === null))) throw protocolError(response, 'the answer is not the results of the batch');
  const { plant, ...result } = raw as BatchResult & RawResult;
  if (plant === undefined || operation.op === 'delete') return result as BatchResult;
  const id = toId(operation.op === 'create' ? operation.plant.id : operation.id);
  // An update's plant has its times: kept, after the exact id. A create's and a put's are { name, tag? }.
  const stored = operation.op === 'update' ? versioned({ ...plant, id } as StoredPlant, raw.etag) : created(id, plant as PutPlant, raw.etag);
  return { ...result, plant: stored } as BatchResult;
}

export function writeCalls({ base, send }: Transport) {
  return {
    /**
     * Creates the plant under `id` (201) or replaces its name and tag (200; a `tag` left out is removed). With
     * `ifMatch` or `ifNoneMatch: '*'` a plant in the other state answers 412 41201 and nothing changes.
     */
    async putPlant(id: bigint, plant: PutPlant, options: PutOptions = {}): Promise<PutResult> {
      const exact = toId(id);
      const { ifNoneMatch } = options;
      const headers = ifNoneMatch === undefined ? undefined : { 'If-None-Match': ifNoneMatch };
      const response = await send('PUT', `${base}/plants/${exact}`, { ...options, body: plantJson({ name: plant.name, tag: plant.tag }), headers });
      const stored = parseJson(await readText(response), response) as PutPlant;
      return { plant: created(exact, stored, response.headers.get('ETag')), created: response.status === 201 };
    },

    /**
     * Every operation applied in order in one commit, resolving with one result per operation; or none, rejecting
     * with the first failed operation's PlantStoreError, whose `operation` is its index. Retried like every write:
     * its key makes a try after a lost answer get that answer, never a second application.
     */
    async batch<const T extends readonly BatchOperation[]>(operations: T, options: WriteOptions = {}): Promise<BatchResults<T>> {
      const body = `{"operations":[${operations.map(operationJson).join(',')}]}`;
      const response = await send('POST', `${base}/plants/batch`, { ...options, body });
      const results = (parseJson(await readText(response), response) as { results?: unknown } | null)?.results;
      if (!Array.isArray(results) || results.length !== operations.length) throw protocolError(response, 'the answer is not one result per operation');
      return operations.map((operation, index) => toResult(operation, results[index] as RawResult, response)) as BatchResults<T>;
    },
  };
}
