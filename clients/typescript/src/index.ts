/**
 * The Plant Store client: the service's calls on fetch, with every int64 id an exact bigint both ways, retries on
 * 429, 503 and network errors, one error type, ETags for conditional edits, and the change feed. It runs
 * unchanged in browsers and Node 20: it imports nothing from node: and needs no polyfill. Types come from the
 * served OpenAPI document (./openapi.ts).
 */
import { readChanges, type ChangeEvent, type ChangesQuery } from './changes.js';
import type { components } from './openapi.js';
import { backoff, isNetworkError, parseJson, parsePlants, protocolError, readText, sleep, toError, toId, toInt64, versioned, withEtag, type PlantStoreError, type StoredPlant, type Versioned } from './wire.js';

export { newPlantId } from './ids.js';
export { PlantStoreError, type FieldError, type StoredPlant, type Versioned } from './wire.js';
export type { ChangeEvent, ChangesQuery } from './changes.js';

type Schemas = components['schemas'];
export type NewPlant = Schemas['NewPlant'];
export type Plant = Schemas['Plant'];
/** What a create resolves with: the id sent, with the name and tag the service stored. */
export type CreatedPlant = { id: bigint; name: string; tag?: string };
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
  const baseUrl = new URL(options.baseUrl, (globalThis as { location?: { href: string } }).location?.href);
  const base = baseUrl.href.replace(/\/$/, '');

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
        response = await call(url, { method, headers, body, signal, redirect: 'manual' });
      } catch (error) {
        // An abort is not retried.
        if (!isNetworkError(error) || signal?.aborted === true || attempt >= attempts) throw error;
        await sleep(delay, signal);
        continue;
      }
      if (response.ok) return response;
      const error = await toError(response);
      // Never sooner than the backoff, even on Retry-After: 0.
      const wait = Math.max(error.retryAfterMs ?? 0, delay);
      // A Retry-After beyond maxDelayMs is honoured by not retrying early: the caller gets it in retryAfterMs.
      if ((response.status !== 429 && response.status !== 503) || attempt >= attempts || wait > maxDelayMs) throw error;
      await sleep(wait, signal);
    }
  }

  /** The next page of a list answer; `after` is this page's, which the next one's must pass. */
  function nextPage(response: Response, after: bigint | undefined): { next?: string; nextAfter?: bigint } {
    const target = nextTarget(response.headers.get('Link'));
    if (target === undefined) return {};
    // The Link target is path-absolute (under the proxy's prefix when the service is told it): read against baseUrl.
    let next: URL | undefined;
    try {
      next = new URL(target, base);
    } catch {
      // Not a URL: refused below like any link the client will not follow.
    }
    // The token goes to baseUrl's origin only, so a page elsewhere (http://other/…, //other/…) is not fetched.
    if (next?.origin !== baseUrl.origin) throw protocolError(response, `the next page's link leads to another origin, ${next?.origin ?? target}; the client sends its token to ${baseUrl.origin} only`);
    const nextAfter = toInt64(next.searchParams.get('after') ?? '');
    // An after that does not pass this page's would fetch the same pages forever.
    if (nextAfter === undefined || (after !== undefined && nextAfter <= after)) throw protocolError(response, `the next page's link does not advance: ${next.href}`);
    return { next: next.href, nextAfter };
  }

  /** One page, and its link to the next, or why that link is refused (thrown once the page's plants are handed over). */
  async function page(url: string, signal: AbortSignal | undefined, after: bigint | undefined): Promise<Page & { next?: string; refused?: PlantStoreError }> {
    const response = await send('GET', url, { signal });
    const plants = parsePlants(await readText(response), response, true);
    try {
      return { plants, ...nextPage(response, after) };
    } catch (refused) {
      return { plants, refused: refused as PlantStoreError };
    }
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

    /** Exactly `{ id, name, tag? }`, with the version's ETag in the non-enumerable `etag`. */
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

    /** One page in ascending id; nextAfter is the after of the next page, absent on the last one. */
    async listPlants(query: { limit?: number; after?: bigint; tag?: string } = {}, { signal }: CallOptions = {}): Promise<Page> {
      const { plants, nextAfter, refused } = await page(listUrl(query), signal, query.after);
      if (refused !== undefined) throw refused;
      return nextAfter === undefined ? { plants } : { plants, nextAfter };
    },

    /** Every plant, one request per page, following the service's Link to the end. */
    async *plants(query: { tag?: string; pageSize?: number } = {}, { signal }: CallOptions = {}): AsyncGenerator<StoredPlant, void, undefined> {
      let current = await page(listUrl({ limit: query.pageSize, tag: query.tag }), signal, undefined);
      for (;;) {
        yield* current.plants;
        if (current.refused !== undefined) throw current.refused;
        if (current.next === undefined) return;
        current = await page(current.next, signal, current.nextAfter);
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
