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
import { parseJson, parsePlants, protocolError, readText, toId, versioned, withEtag, type StoredPlant, type Versioned } from './wire.js';

export { newPlantId } from './ids.js';
export { PlantStoreError, type FieldError, type StoredPlant, type Versioned } from './wire.js';
export type { ChangeEvent, ChangesQuery } from './changes.js';
export type { ClientOptions, RetryOptions } from './http.js';
export type { CallOptions, ListQuery, Page, PlantQuery, PlantSort } from './list.js';

type Schemas = components['schemas'];
export type NewPlant = Schemas['NewPlant'];
export type Plant = Schemas['Plant'];
/** What a create resolves with: the id sent, with the name and tag the service stored. */
export type CreatedPlant = { id: bigint; name: string; tag?: string };
/** A JSON Merge Patch: members left out keep their value, `tag: null` removes the tag. */
export type PlantPatch = Schemas['PlantPatch'];
/** `ifMatch`: the ETag the change is for; a plant changed since answers 412 (PlantStoreError code 41201). */
export type ConditionalOptions = CallOptions & { ifMatch?: string };

export function createClient(options: ClientOptions) {
  const transport = createTransport(options);
  const { base, send } = transport;

  return {
    /**
     * Resolves with `{ id, name, tag? }`: the id sent (the service never echoes it) with the plant as stored, and its
     * ETag. An identical create answers the same, so it is retried.
     */
    async createPlant(plant: NewPlant, { signal }: CallOptions = {}): Promise<Versioned<CreatedPlant>> {
      const id = toId(plant.id);
      const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
      // JSON.stringify cannot write a bigint; the id goes out as its exact digits.
      const body = `{"id":${id},"name":${JSON.stringify(plant.name)}${tag}}`;
      const response = await send('POST', `${base}/plants`, { body, signal });
      const stored = parseJson(await readText(response), response) as Plant;
      return withEtag(stored.tag === undefined ? { id, name: stored.name } : { id, name: stored.name, tag: stored.tag }, response.headers.get('ETag'));
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
    async updatePlant(id: bigint, patch: PlantPatch, { ifMatch, signal }: ConditionalOptions = {}): Promise<Versioned<StoredPlant>> {
      const members: string[] = [];
      if (patch.id !== undefined) members.push(`"id":${toId(patch.id)}`);
      if (patch.name !== undefined) members.push(`"name":${JSON.stringify(patch.name)}`);
      if (patch.tag !== undefined) members.push(`"tag":${JSON.stringify(patch.tag)}`);
      const response = await send('PATCH', `${base}/plants/${toId(id)}`, { body: `{${members.join(',')}}`, type: 'application/merge-patch+json', ifMatch, signal });
      // A token without plants:read is answered 204 and no plant (docs/auth.md): the edit is stored, the plant unknown.
      if (response.status === 204) throw protocolError(response, `the edit was stored (ETag ${response.headers.get('ETag') ?? 'unknown'}), but this token may not read plants (plants:read), so no plant came back`);
      return versioned(parsePlants(await readText(response), response)[0] as StoredPlant, response.headers.get('ETag'));
    },

    async deletePlant(id: bigint, { ifMatch, signal }: ConditionalOptions = {}): Promise<void> {
      await send('DELETE', `${base}/plants/${toId(id)}`, { ifMatch, signal });
    },

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
