/**
 * One request to the service, tried again on 429, 503 and network errors: the token asked for before each try,
 * no redirect followed, every other answer a PlantStoreError. Shared by every call; nothing from node:.
 */
import { backoff, isNetworkError, sleep, toError } from './wire.js';

export type RetryOptions = { attempts?: number; maxDelayMs?: number };
export type ClientOptions = {
  baseUrl: string;
  /** The bearer token, or a function giving it (sync or async), called before every try. */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof fetch;
  retry?: RetryOptions;
};

export type Send = { body?: string; type?: string; ifMatch?: string; headers?: Record<string, string>; signal?: AbortSignal };

export type Transport = {
  /** baseUrl without its trailing slash. */
  base: string;
  /** The only origin the token goes to. */
  origin: string;
  call: typeof fetch;
  maxDelayMs: number;
  authorization: () => Promise<Record<string, string>>;
  send: (method: string, url: string, options?: Send) => Promise<Response>;
};

export function createTransport(options: ClientOptions): Transport {
  const call = options.fetch ?? ((input: Parameters<typeof fetch>[0], init?: RequestInit) => fetch(input, init));
  const attempts = Math.max(1, options.retry?.attempts ?? 3);
  const maxDelayMs = options.retry?.maxDelayMs ?? 5000;
  // A relative baseUrl ("/api") is read against the page's address in a browser.
  const baseUrl = new URL(options.baseUrl, (globalThis as { location?: { href: string } }).location?.href);

  /** The token is asked for before every try: a function may hand out a fresh one. */
  const authorization = async (): Promise<Record<string, string>> => {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    return token === undefined ? {} : { Authorization: `Bearer ${token}` };
  };

  /** One operation, tried up to `attempts` times; resolves with the 2xx response. */
  async function send(method: string, url: string, { body, type = 'application/json', ifMatch, headers: extra, signal }: Send = {}): Promise<Response> {
    for (let attempt = 1; ; attempt += 1) {
      signal?.throwIfAborted();
      const headers: Record<string, string> = { Accept: 'application/json', ...extra, ...(await authorization()) };
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

  return { base: baseUrl.href.replace(/\/$/, ''), origin: baseUrl.origin, call, maxDelayMs, authorization, send };
}
