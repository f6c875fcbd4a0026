/**
 * The Plant Store client: the service's five calls on fetch, with every int64 id an exact bigint both ways,
 * retries on 429, 503 and network errors, and one error type. It runs unchanged in browsers and Node 20: it
 * imports nothing from node: and needs no polyfill. Types come from the served OpenAPI document (./openapi.ts).
 */
import type { components } from './openapi.js';

type Schemas = components['schemas'];
export type NewPlant = Schemas['NewPlant'];
export type Plant = Schemas['Plant'];
export type StoredPlant = Schemas['StoredPlant'];
export type FieldError = Schemas['FieldError'];
export type Page = { plants: StoredPlant[]; nextAfter?: bigint };
export type CallOptions = { signal?: AbortSignal };
export type RetryOptions = { attempts?: number; maxDelayMs?: number };
export type ClientOptions = {
  baseUrl: string;
  /** The bearer token, or a function giving it (sync or async), called before every try. */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof fetch;
  retry?: RetryOptions;
};

/** Every answer that is not 2xx: the catalogue code, the message, and for field validation each field's problem. */
export class PlantStoreError extends Error {
  readonly status: number;
  readonly code: number;
  readonly fields?: FieldError[];
  readonly requestId?: string;
  readonly retryAfterMs?: number;

  constructor(status: number, body: { error?: unknown; message?: unknown; fields?: FieldError[] }, requestId?: string, retryAfterMs?: number) {
    super(typeof body.message === 'string' ? body.message : `HTTP ${status}`);
    this.name = 'PlantStoreError';
    this.status = status;
    // 0 when the answer did not come from the service (a proxy's HTML page, for one).
    this.code = typeof body.error === 'number' ? body.error : 0;
    if (Array.isArray(body.fields)) this.fields = body.fields;
    if (requestId !== undefined) this.requestId = requestId;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/**
 * A random id from the whole positive int64 range (1 to 2^63 - 1): the contract has the client choose ids, so a
 * create can be retried as is. Most ids drawn are past 2^53, where a JavaScript number would round them.
 */
export function newPlantId(): bigint {
  const [high = 0, low = 0] = crypto.getRandomValues(new Uint32Array(2));
  const id = (BigInt(high & 0x7fffffff) << 32n) | BigInt(low);
  return id === 0n ? newPlantId() : id;
}

function toId(value: bigint | number): bigint {
  if (typeof value === 'bigint') return value;
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new TypeError(`an id must be a bigint (or a safe integer); got ${String(value)}`);
}

// Only keys are followed by a colon, and inside a JSON string every quote is escaped: "id": then digits is the
// id member of a plant, never text within a name or tag. JSON.parse does the rest; only ids are re-read exactly.
const ID_MEMBER = /"id"\s*:\s*(-?\d+)/g;

function parsePlants(text: string): StoredPlant[] {
  const value = JSON.parse(text) as StoredPlant | StoredPlant[];
  const plants = Array.isArray(value) ? value : [value];
  let index = 0;
  for (const match of text.matchAll(ID_MEMBER)) {
    const plant = plants[index++];
    if (plant !== undefined) plant.id = BigInt(match[1] as string);
  }
  if (index !== plants.length) throw new SyntaxError(`expected ${plants.length} plant ids, found ${index}`);
  return plants;
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

async function toError(response: Response): Promise<PlantStoreError> {
  let body: { error?: unknown; message?: unknown; fields?: FieldError[] } = {};
  try {
    body = (JSON.parse(await response.text()) as typeof body | null) ?? {};
  } catch {
    // Not the service's Error body: the status alone tells what happened.
  }
  return new PlantStoreError(response.status, body, response.headers.get('X-Request-Id') ?? undefined, retryAfterMs(response.headers.get('Retry-After')));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

const nextTarget = (link: string | null) => (link === null ? undefined : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1]);

export function createClient(options: ClientOptions) {
  const call = options.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => fetch(input, init));
  const attempts = Math.max(1, options.retry?.attempts ?? 3);
  const maxDelayMs = options.retry?.maxDelayMs ?? 5000;
  // A relative baseUrl ("/api") is read against the page's address in a browser.
  const base = new URL(options.baseUrl, (globalThis as { location?: { href: string } }).location?.href).href.replace(/\/$/, '');

  /** One operation, tried up to `attempts` times; resolves with the 2xx response. */
  async function send(method: string, url: string, body: string | undefined, signal: AbortSignal | undefined): Promise<Response> {
    for (let attempt = 1; ; attempt += 1) {
      signal?.throwIfAborted();
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (token !== undefined) headers.Authorization = `Bearer ${token}`;
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      // Exponential with jitter: 100 ms, 200 ms, 400 ms… each between half and all of it, never over maxDelayMs.
      const backoff = Math.min(maxDelayMs, 100 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      let response: Response;
      try {
        response = await call(url, { method, headers, body, signal });
      } catch (error) {
        // fetch rejects with a TypeError when no answer came (refused, reset, DNS); an abort is not retried. By
        // name: a fetch from another realm (a test runner's sandbox, an iframe) throws another realm's TypeError.
        if ((error as Error | undefined)?.name !== 'TypeError' || signal?.aborted === true || attempt >= attempts) throw error;
        await sleep(backoff, signal);
        continue;
      }
      if (response.ok) return response;
      const error = await toError(response);
      const wait = error.retryAfterMs ?? backoff;
      // A Retry-After beyond maxDelayMs is honoured by not retrying early: the caller gets it in retryAfterMs.
      if ((response.status !== 429 && response.status !== 503) || attempt >= attempts || wait > maxDelayMs) throw error;
      await sleep(wait, signal);
    }
  }

  async function page(url: string, signal: AbortSignal | undefined): Promise<Page & { next?: string }> {
    const response = await send('GET', url, undefined, signal);
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
    /** Resolves with the plant as stored, without its id; an identical create answers the same, so it is retried. */
    async createPlant(plant: NewPlant, { signal }: CallOptions = {}): Promise<Plant> {
      const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
      // JSON.stringify cannot write a bigint; the id goes out as its exact digits.
      const body = `{"id":${toId(plant.id)},"name":${JSON.stringify(plant.name)}${tag}}`;
      const stored = (await (await send('POST', `${base}/plants`, body, signal)).json()) as Plant;
      return stored.tag === undefined ? { name: stored.name } : { name: stored.name, tag: stored.tag };
    },

    async getPlant(id: bigint, { signal }: CallOptions = {}): Promise<StoredPlant> {
      const response = await send('GET', `${base}/plants/${toId(id)}`, undefined, signal);
      const [plant] = parsePlants(await response.text()) as [StoredPlant];
      return plant.tag === undefined ? { id: plant.id, name: plant.name } : { id: plant.id, name: plant.name, tag: plant.tag };
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

    async deletePlant(id: bigint, { signal }: CallOptions = {}): Promise<void> {
      await send('DELETE', `${base}/plants/${toId(id)}`, undefined, signal);
    },
  };
}

export type PlantStoreClient = ReturnType<typeof createClient>;
