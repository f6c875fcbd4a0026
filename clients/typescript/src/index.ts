/**
 * The Plant Store client: the service's calls on fetch, with every int64 id an exact bigint both ways, retries on
 * 429, 503 and network errors, one error type, ETags for conditional edits, lists with search, sort and count,
 * and the change feed. It runs unchanged in browsers and Node 20: it imports nothing from node: and needs no
 * polyfill. Types come from the served OpenAPI document (./openapi.ts). The live list (./live.ts) and the TanStack
 * Query layer (./tanstack.ts) are entries of their own, so nothing of theirs is in this one.
 */
import { readChanges, type ChangeEvent, type ChangesQuery } from './changes.js';
import { createTransport, type ClientOptions } from './http.js';
import { listCalls, type CallOptions } from './list.js';
import type { components } from './openapi.js';
import { parseJson, parsePlants, protocolError, readText, toId, versioned, type StoredPlant, type Versioned } from './wire.js';
import { created, patchJson, plantJson, writeCalls, type CreatedPlant, type NewPlant, type PlantPatch, type WriteOptions } from './writes.js';

export { newIdempotencyKey, newPlantId } from './ids.js';
export { PlantStoreError, type FieldError, type StoredPlant, type Versioned } from './wire.js';
export type { ChangeEvent, ChangesQuery } from './changes.js';
export type { ClientOptions, RetryOptions } from './http.js';
export type { CallOptions, ListQuery, Page, PlantQuery, PlantSort } from './list.js';
export type { BatchOperation, BatchResult, BatchResults, CreatedPlant, DeletedResult, NewPlant, PlantPatch, PutOptions, PutPlant, PutResult, ResultOf, UpdatedResult, WriteOptions, WrittenResult } from './writes.js';

export type Plant = components['schemas']['Plant'];
/** `ifMatch`: the ETag the change is for; a plant changed since answers 412 (PlantStoreError code 41201). */
export type ConditionalOptions = WriteOptions & { ifMatch?: string };

export function createClient(options: ClientOptions) {
  const transport = createTransport(options);
  const { base, send } = transport;

  return {
    /**
     * Resolves with `{ id, name, tag? }`: the id sent (the service never echoes it) with the plant as stored, and its
     * ETag. Like every write it carries an Idempotency-Key (`idempotencyKey`, or a new one), the same on each try.
     */
    async createPlant(plant: NewPlant, options: WriteOptions = {}): Promise<Versioned<CreatedPlant>> {
      // JSON.stringify cannot write a bigint; the id goes out as its exact digits.
      const response = await send('POST', `${base}/plants`, { ...options, body: plantJson(plant) });
      return created(toId(plant.id), parseJson(await readText(response), response) as Plant, response.headers.get('ETag'));
    },

    /** Exactly `{ id, name, tag?, createdAt, updatedAt }`, with the version's ETag in the non-enumerable `etag`. */
    async getPlant(id: bigint, { signal }: CallOptions = {}): Promise<Versioned<StoredPlant>> {
      const response = await send('GET', `${base}/plants/${toId(id)}`, { signal });
      return versioned(parsePlants(await readText(response), response)[0] as StoredPlant, response.headers.get('ETag'));
    },

    /**
     * A JSON Merge Patch; resolves with the plant as stored after it, with its new ETag. With a token that may not
     * read (204, no plant) it rejects with status 204 after the edit is stored.
     */
    async updatePlant(id: bigint, patch: PlantPatch, options: ConditionalOptions = {}): Promise<Versioned<StoredPlant>> {
      const response = await send('PATCH', `${base}/plants/${toId(id)}`, { ...options, body: patchJson(patch), type: 'application/merge-patch+json' });
      // A token without plants:read is answered 204 and no plant (docs/auth.md): the edit is stored, the plant unknown.
      if (response.status === 204) throw protocolError(response, `the edit was stored (ETag ${response.headers.get('ETag') ?? 'unknown'}), but this token may not read plants (plants:read), so no plant came back`);
      return versioned(parsePlants(await readText(response), response)[0] as StoredPlant, response.headers.get('ETag'));
    },

    async deletePlant(id: bigint, options: ConditionalOptions = {}): Promise<void> {
      await send('DELETE', `${base}/plants/${toId(id)}`, options);
    },

    ...writeCalls(transport),

    ...listCalls(transport),

    /**
     * Every change from now (or after `after`) until the signal aborts or the loop breaks: reconnects by itself
     * and resumes where it was. `reset` means reload what you show. With q or tag, the service's filter rule: a
     * plant that leaves the filter comes once with its new state, which no longer matches.
     */
    changes(query: ChangesQuery = {}): AsyncGenerator<ChangeEvent, void, undefined> {
      const search = new URLSearchParams();
      if (query.q !== undefined) search.set('q', query.q);
      if (query.tag !== undefined) search.set('tag', query.tag);
      const text = search.toString();
      return readChanges({ fetch: transport.call, url: `${base}/plants/events${text === '' ? '' : `?${text}`}`, headers: transport.authorization, maxDelayMs: transport.maxDelayMs }, query);
    },
  };
}

export type PlantStoreClient = ReturnType<typeof createClient>;
