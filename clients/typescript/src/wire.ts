/**
 * What every call shares on the wire: exact ids both ways, the error type, the ETag a response carries, and the
 * wait between tries. No fetch here and nothing from node:.
 */
import { withEtag, type Versioned } from './etag.js';
import type { components } from './openapi.js';

export { withEtag, type Versioned } from './etag.js';

export type FieldError = components['schemas']['FieldError'];
export type StoredPlant = components['schemas']['StoredPlant'];

/** Every answer that is not 2xx: the catalogue code, the message, and for field validation each field's problem. */
export class PlantStoreError extends Error {
  readonly status: number;
  readonly code: number;
  readonly fields?: FieldError[];
  /** A failed batch: the index of the operation that failed; none of the batch was applied. */
  readonly operation?: number;
  readonly requestId?: string;
  readonly retryAfterMs?: number;

  constructor(status: number, body: { error?: unknown; message?: unknown; fields?: FieldError[]; operation?: unknown }, requestId?: string, retryAfterMs?: number) {
    super(typeof body.message === 'string' ? body.message : `HTTP ${status}`);
    this.name = 'PlantStoreError';
    this.status = status;
    // 0 when the answer did not come from the service (a proxy's HTML page, for one).
    this.code = typeof body.error === 'number' ? body.error : 0;
    if (Array.isArray(body.fields)) this.fields = body.fields;
    if (typeof body.operation === 'number') this.operation = body.operation;
    if (requestId !== undefined) this.requestId = requestId;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

export function toId(value: bigint | number): bigint {
  if (typeof value === 'bigint') return value;
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new TypeError(`an id must be a bigint (or a safe integer); got ${String(value)}`);
}

/** The longest wait the client takes or reports: a longer Retry-After (10^9 s, a date in 2090) counts as this. */
export const MAX_WAIT_MS = 300_000;
/** The most of an answer the client reads: the service's largest page (1,000 plants, names and tags at their longest, every character escaped) is about 2 MB. */
export const MAX_ANSWER_BYTES = 8 << 20;

/** An answer the service would not send (a foreign Link, an id past int64, a position going back): `code` 0, `status` the answer's. */
export const protocolError = (response: Response, message: string) =>
  new PlantStoreError(response.status, { message }, response.headers.get('X-Request-Id') ?? undefined);

const INT64 = 2n ** 63n;

/** An int64 in plain decimal as the service writes it (no +, -0, exponent, fraction or leading zero), else undefined. */
export function toInt64(text: string): bigint | undefined {
  if (!/^(?:0|-?[1-9]\d{0,18})$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -INT64 && value < INT64 ? value : undefined;
}

export function parseJson(text: string, response: Response): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw protocolError(response, 'the answer is not JSON');
  }
}

// Only keys are followed by a colon, and inside a JSON string every quote is escaped: "id": then a number is the
// id member of a plant, never text within a name or tag. The number is taken whole (1e400, 1.5), then held to
// int64 in plain decimal; JSON.parse does the rest.
const ID_MEMBER = /"id"\s*:\s*([-+\w.]*)/g;

/** The plants of an answer (a list, or one plant), each id an exact bigint; anything else is a PlantStoreError. */
export function parsePlants(text: string, response: Response, list = false): StoredPlant[] {
  const value = parseJson(text, response);
  const plants = (list ? value : [value]) as StoredPlant[];
  const ids = [...text.matchAll(ID_MEMBER)].map((match) => match[1] as string);
  if (!Array.isArray(plants) || Array.isArray(value) !== list || ids.length !== plants.length) throw protocolError(response, 'the answer is not the plants asked for');
  plants.forEach((plant, index) => {
    const id = toInt64(ids[index] as string);
    if (id === undefined || typeof plant !== 'object' || plant === null) throw protocolError(response, `an id the client cannot hold exactly: ${ids[index]}`);
    plant.id = id;
  });
  return plants;
}

/** The answer's text, read up to MAX_ANSWER_BYTES: a larger one is cancelled, not buffered. */
export async function readText(response: Response): Promise<string> {
  const tooLarge = () => protocolError(response, `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  if (Number(response.headers.get('Content-Length')) > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (let size = 0; reader !== undefined; ) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/** Exactly `{ id, name, tag?, createdAt, updatedAt }`, as one version. */
export const versioned = ({ id, name, tag, createdAt, updatedAt }: StoredPlant, etag: string | null | undefined): Versioned<StoredPlant> =>
  withEtag(tag === undefined ? { id, name, createdAt, updatedAt } : { id, name, tag, createdAt, updatedAt }, etag);

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const ms = /^\d+$/.test(header) ? Number(header) * 1000 : Date.parse(header) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.min(MAX_WAIT_MS, Math.max(0, ms));
}

export async function toError(response: Response): Promise<PlantStoreError> {
  let body: ConstructorParameters<typeof PlantStoreError>[1] = {};
  // The client follows no redirect (fetch's redirect: 'manual'): one to another origin would take the token there.
  if (response.type === 'opaqueredirect' || (response.status > 299 && response.status < 400)) {
    body = { message: `the service redirected to ${response.headers.get('Location') ?? 'another address'}; the client follows no redirect` };
  } else {
    try {
      body = (JSON.parse(await readText(response)) as typeof body | null) ?? {};
    } catch {
      // Not the service's Error body: the status alone tells what happened.
    }
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
