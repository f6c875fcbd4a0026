/**
 * What every call shares on the wire: exact ids both ways, the error type, the ETag a response carries, and the
 * wait between tries. No fetch here and nothing from node:.
 */
import type { components } from './openapi.js';

export type FieldError = components['schemas']['FieldError'];
export type StoredPlant = components['schemas']['StoredPlant'];
/** A plant as one version: `etag` is that version's strong entity tag ("42"), kept off the enumerable members. */
export type Versioned<T> = T & { readonly etag?: string };

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

export function toId(value: bigint | number): bigint {
  if (typeof value === 'bigint') return value;
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new TypeError(`an id must be a bigint (or a safe integer); got ${String(value)}`);
}

// Only keys are followed by a colon, and inside a JSON string every quote is escaped: "id": then digits is the
// id member of a plant, never text within a name or tag. JSON.parse does the rest; only ids are re-read exactly.
const ID_MEMBER = /"id"\s*:\s*(-?\d+)/g;

export function parsePlants(text: string): StoredPlant[] {
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

/** `etag` as a non-enumerable member: equality, keys, JSON and spreads see the plant only. */
export function withEtag<T extends object>(value: T, etag: string | null | undefined): Versioned<T> {
  return etag == null ? value : Object.defineProperty(value, 'etag', { value: etag });
}

/** Exactly `{ id, name, tag? }`, as one version. */
export const versioned = (plant: StoredPlant, etag: string | null | undefined): Versioned<StoredPlant> =>
  withEtag(plant.tag === undefined ? { id: plant.id, name: plant.name } : { id: plant.id, name: plant.name, tag: plant.tag }, etag);

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

export async function toError(response: Response): Promise<PlantStoreError> {
  let body: { error?: unknown; message?: unknown; fields?: FieldError[] } = {};
  try {
    body = (JSON.parse(await response.text()) as typeof body | null) ?? {};
  } catch {
    // Not the service's Error body: the status alone tells what happened.
  }
  return new PlantStoreError(response.status, body, response.headers.get('X-Request-Id') ?? undefined, retryAfterMs(response.headers.get('Retry-After')));
}

/** Exponential with jitter: 100 ms, 200 ms, 400 ms… for tries 1, 2, 3…, each between half and all of it, never over maxDelayMs. */
export const backoff = (attempt: number, maxDelayMs: number): number => Math.min(maxDelayMs, 100 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);

/** fetch rejects with a TypeError when no answer came (refused, reset, DNS). By name: another realm's fetch throws its own TypeError. */
export const isNetworkError = (error: unknown): boolean => (error as Error | undefined)?.name === 'TypeError';

export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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
