/**
 * The Plant Store client: the service's calls on fetch, with every int64 id an exact bigint both ways, retries on
 * 429, 503 and network errors, one error type, ETags for conditional edits, and the change feed. It runs
 * unchanged in browsers and Node 20: it imports nothing from node: and needs no polyfill. Types come from the
 * served OpenAPI document (./openapi.ts).
 */
import { readChanges, type ChangeEvent, type ChangesQuery } from './changes.js';
import type { components } from './openapi.js';
import { backoff, isNetworkError, parsePlants, sleep, toError, toId, versioned, withEtag, type StoredPlant, type Versioned } from './wire.js';

export { newPlantId } from './ids.js';
export { PlantStoreError, type FieldError, type StoredPlant, type Versioned } from './wire.js';
export type { ChangeEvent, ChangesQuery } from './changes.js';

type Schemas = components['schemas'];
export type NewPlant = Schemas['NewPlant'];
export type Plant = Schemas['Plant'];
/** A JSON Merge Patch: members left out keep their value, `tag: null` removes the tag. */
export type PlantPatch = Schemas['PlantPatch'];
export type Page = { plants: StoredPlant[]; nextAfter?: bigint };
export type CallOptions = { signal?: AbortSignal };
/** `ifMatch`: the ETag the change is for; a plant changed since answers 412 (PlantStoreError code 41201). */
export type ConditionalOptions = CallOptions & { ifMatch?: string };
export type RetryOptions = { attempts?: number; maxDelayMs?: number };
export type ClientOptions = {
  baseUrl: string;
  /** The bearer token, or a function giving it (sync or async), called before every try. */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof fetch;
  retry?: RetryOptions;
};

type Send = { body?: string; type?: string; ifMatch?: string; signal?: AbortSignal };

const nextTarget = (link: string | null) => (link === null ? undefined : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1]);

export function createClient(options: ClientOptions) {
  const call = options.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => fetch(input, init));
  const attempts = Math.max(1, options.retry?.attempts ?? 3);
  const maxDelayMs = options.retry?.maxDelayMs ?? 5000;
  // A relative baseUrl ("/api") is read against the page's address in a browser.
  const base = new URL(options.baseUrl, (globalThis as { location?: { href: string } }).location?.href).href.replace(/\/$/, '');

  /** The token is asked for before every try: a function may hand out a fresh one. */
  const authorization = async (): Promise<Record<string, string>> => {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    return token === undefined ? {} : { Authorization: `Bearer ${token}` };
  };

  /** One operation, tried up to `attempts` times; resolves with the 2xx response. */
  async function send(method: string, url: string, { body, type = 'application/json', ifMatch, signal }: Send = {}): Promise<Response> {
    for (let attempt = 1; ; attempt += 1) {
      signal?.throwIfAborted();
      const headers: Record<string, string> = { Accept: 'application/json', ...(await authorization()) };
      if (body !== undefined) headers['Content-Type'] = type;
      if (ifMatch !== undefined) headers['If-Match'] = ifMatch;
      const delay = backoff(attempt, maxDelayMs);
      let response: Response;
      try {
        response = await call(url, { method, headers, body, signal });
      } catch (error) {
        // An abort is not retried.
        if (!isNetworkError(error) || signal?.aborted === true || attempt >= attempts) throw error;
        await sleep(delay, signal);
        continue;
      }
      if (response.ok) return response;
      const error = await toError(response);
      const wait = error.retryAfterMs ?? delay;
      // A Retry-After beyond maxDelayMs is honoured by not retrying early: the caller gets it in retryAfterMs.
      if ((response.status !== 429 && response.status !== 503) || attempt >= attempts || wait > maxDelayMs) throw error;
      await sleep(wait, signal);
    }
  }

  async function page(url: string, signal: AbortSignal | undefined): Promise<Page & { next?: string }> {
    const response = await send('GET', url, { signal });
    const plants = parsePlants(await response.text());
    const target = nextTarget(response.headers.get('Link'));
    if (target === undefined) return { plants };
    // The Link target is path-absolute (under the proxy's prefix when the service is told it): read against baseUrl.
    const next = new URL(target, base);
    const after = next.searchParams.get('after');
    return after === null ? { plants, next: next.href } : { plants, nextAfter: BigInt(after), next: next.href };
  }

  function listUrl(query: { limit?: number; after?: bigint | number; tag?: string }): string {
    const search = new URLSearchParams();
    if (query.limit !== undefined) search.set('limit', String(query.limit));
    if (query.after !== undefined) search.set('after', toId(query.after).toString());
    if (query.tag !== undefined) search.set('tag', query.tag);
    const text = search.toString();
    return `${base}/plants${text === '' ? '' : `?${text}`}`;
  }

  return {
    /** Resolves with the plant as stored, without its id, and its ETag; an identical create answers the same, so it is retried. */
    async createPlant(plant: NewPlant, { signal }: CallOptions = {}): Promise<Versioned<Plant>> {
      const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
      // JSON.stringify cannot write a bigint; the id goes out as its exact digits.
      const body = `{"id":${toId(plant.id)},"name":${JSON.stringify(plant.name)}${tag}}`;
      const response = await send('POST', `${base}/plants`, { body, signal });
      const stored = (await response.json()) as Plant;
      return withEtag(stored.tag === undefined ? { name: stored.name } : { name: stored.name, tag: stored.tag }, response.headers.get('ETag'));
    },

    /** Exactly `{ id, name, tag? }`, with the version's ETag in the non-enumerable `etag`. */
    async getPlant(id: bigint, { signal }: CallOptions = {}): Promise<Versioned<StoredPlant>> {
      const response = await send('GET', `${base}/plants/${toId(id)}`, { signal });
      return versioned(parsePlants(await response.text())[0] as StoredPlant, response.headers.get('ETag'));
    },

    /** A JSON Merge Patch; resolves with the plant as stored after it, with its new ETag. */
    async updatePlant(id: bigint, patch: PlantPatch, { ifMatch, signal }: ConditionalOptions = {}): Promise<Versioned<StoredPlant>> {
      const members: string[] = [];
      if (patch.id !== undefined) members.push(`"id":${toId(patch.id)}`);
      if (patch.name !== undefined) members.push(`"name":${JSON.stringify(patch.name)}`);
      if (patch.tag !== undefined) members.push(`"tag":${JSON.stringify(patch.tag)}`);
      const response = await send('PATCH', `${base}/plants/${toId(id)}`, { body: `{${members.join(',')}}`, type: 'application/merge-patch+json', ifMatch, signal });
      return versioned(parsePlants(await response.text())[0] as StoredPlant, response.headers.get('ETag'));
    },

    /** One page in ascending id; nextAfter is the after of the next page, absent on the last one. */
    async listPlants(query: { limit?: number; after?: bigint; tag?: string } = {}, { signal }: CallOptions = {}): Promise<Page> {
      const { plants, nextAfter } = await page(listUrl(query), signal);
      return nextAfter === undefined ? { plants } : { plants, nextAfter };
    },

    /** Every plant, one request per page, following the service's Link to the end. */
    async *plants(query: { tag?: string; pageSize?: number } = {}, { signal }: CallOptions = {}): AsyncGenerator<StoredPlant, void, undefined> {
      let url: string | undefined = listUrl({ limit: query.pageSize, tag: query.tag });
      while (url !== undefined) {
        const current: Page & { next?: string } = await page(url, signal);
        yield* current.plants;
        url = current.next;
      }
    },

    async deletePlant(id: bigint, { ifMatch, signal }: ConditionalOptions = {}): Promise<void> {
      await send('DELETE', `${base}/plants/${toId(id)}`, { ifMatch, signal });
    },

    /**
     * Every change from now (or after `after`) until the signal aborts or the loop breaks: reconnects by itself
     * and resumes where it was. `reset` means reload what you show.
     */
    changes(query: ChangesQuery = {}): AsyncGenerator<ChangeEvent, void, undefined> {
      const search = query.tag === undefined ? '' : `?${new URLSearchParams({ tag: query.tag }).toString()}`;
      return readChanges({ fetch: call, url: `${base}/plants/events${search}`, headers: authorization, maxDelayMs }, query);
    },
  };
}

export type PlantStoreClient = ReturnType<typeof createClient>;
