/**
 * One request to the service, tried again on 429, 503 and network errors: the token asked for before each try,
 * no redirect followed, every other answer a PlantStoreError. Every write carries one Idempotency-Key on all its
 * tries, so a try whose answer was lost is answered from the store on the next, never applied twice. Shared by
 * every call; nothing from node:.
 */
import { newIdempotencyKey } from './ids.js';
import { backoff, isNetworkError, sleep, toError } from './wire.js';

export type RetryOptions = { attempts?: number; maxDelayMs?: number };
export type ClientOptions = {
  baseUrl: string;
  /** The bearer token, or a function giving it (sync or async), called before every try. */
  token?: string | (() => string | Promise<string>);
  /**
   * An operator's tenant: every call and stream acts in it (`Act-As-Tenant`, percent-encoded). Only a token with
   * `plants:admin` may name one; everyone else leaves it out, and the token decides the tenant.
   */
  tenant?: string;
  fetch?: typeof fetch;
  retry?: RetryOptions;
};

/** `idempotencyKey`: the write's key, the caller's own; by default a new one per call (GET sends none). */
export type Send = { body?: string; type?: string; ifMatch?: string; headers?: Record<string, string>; signal?: AbortSignal; idempotencyKey?: string };

export type Transport = {
  /** baseUrl without its trailing slash. */
  base: string;
  /** The only origin the token goes to. */
  origin: string;
  call: typeof fetch;
  maxDelayMs: number;
  /** Who calls, and in which tenant: the headers every call and every stream's connection carries. */
  authorization: () => Promise<Record<string, string>>;
  send: (method: string, url: string, options?: Send) => Promise<Response>;
};

export function createTransport(options: ClientOptions): Transport {
  const call = options.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => fetch(input, init));
  const attempts = Math.max(1, options.retry?.attempts ?? 3);
  const maxDelayMs = options.retry?.maxDelayMs ?? 5000;
  // A relative baseUrl ("/api") is read against the page's address in a browser.
  const baseUrl = new URL(options.baseUrl, (globalThis as { location?: { href: string } }).location?.href);

  // A header value is bytes: a name in any script travels percent-encoded UTF-8, as the service reads it.
  const tenant: Record<string, string> = options.tenant === undefined ? {} : { 'Act-As-Tenant': encodeURIComponent(options.tenant) };

  /** The token is asked for before every try: a function may hand out a fresh one. */
  const authorization = async (): Promise<Record<string, string>> => {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    return token === undefined ? tenant : { ...tenant, Authorization: `Bearer ${token}` };
  };

  /** One operation, tried up to `attempts` times; resolves with the 2xx response. */
  async function send(method: string, url: string, { body, type = 'application/json', ifMatch, headers: extra, signal, idempotencyKey }: Send = {}): Promise<Response> {
    const key = method === 'GET' ? undefined : (idempotencyKey ?? newIdempotencyKey());
    for (let attempt = 1; ; attempt += 1) {
      signal?.throwIfAborted();
      const headers: Record<string, string> = { Accept: 'application/json', ...extra, ...(await authorization()) };
      if (body !== undefined) headers['Content-Type'] = type;
      if (ifMatch !== undefined) headers['If-Match'] = ifMatch;
      if (key !== undefined) headers['Idempotency-Key'] = key;
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
      // 409 40902: this key's first try is still being processed (its answer lost on the way); the next gets its answer.
      if ((response.status !== 429 && response.status !== 503 && error.code !== 40902) || attempt >= attempts || wait > maxDelayMs) throw error;
      await sleep(wait, signal);
    }
  }

  return { base: baseUrl.href.replace(/\/$/, ''), origin: baseUrl.origin, call, maxDelayMs, authorization, send };
}
