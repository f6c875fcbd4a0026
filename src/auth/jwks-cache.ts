import { createLocalJWKSet, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { Agent, request } from 'undici';
import type { Logger } from '../logger';

type LocalKeys = ReturnType<typeof createLocalJWKSet>;

/** Thrown to jose's key lookup when no key set was ever fetched: the 401 then says the provider is unreachable. */
export class JwksUnavailableError extends Error {
  readonly code = 'ERR_PLANTS_JWKS_UNAVAILABLE';
}

export type JwksOptions = { url: string; cooldownMs: number; maxAgeMs: number; timeoutMs: number; logger: Logger; now?: () => number };

/**
 * The identity provider's signing keys (JWKS), fetched on first use and kept. Refetched when older than maxAge
 * (in the background: requests keep using the keys held) and on a token whose kid is unknown, but never more
 * than once per cool-down, so a flood of forged kids cannot turn into a flood of fetches. A failed fetch keeps
 * the last good keys; with none ever fetched, tokens fail at once with JwksUnavailableError instead of waiting.
 */
export class JwksCache {
  private keys: LocalKeys | undefined;
  private fetchedSets = 0;
  private loadedAt = -Infinity;
  private attemptedAt = -Infinity;
  private inFlight: Promise<void> | undefined;
  private readonly agent: Agent;
  private readonly now: () => number;

  constructor(private readonly options: JwksOptions) {
    this.now = options.now ?? Date.now;
    // One connection is plenty for a fetch every few minutes; the timeouts bound a hung provider.
    this.agent = new Agent({ connections: 1, connectTimeout: options.timeoutMs, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
  }

  /** jose's key lookup (jwtVerify's second argument). */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<Awaited<ReturnType<LocalKeys>>> => {
    if (this.keys === undefined) await this.refresh();
    else if (this.now() - this.loadedAt > this.options.maxAgeMs) void this.refresh();
    const keys = this.keys;
    if (keys === undefined) throw new JwksUnavailableError('no JWKS fetched yet');
    try {
      return await keys(header, token);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || !this.mayFetch()) throw error;
      await this.refresh();
      return (this.keys ?? keys)(header, token);
    }
  };

  /** Goes up with every key set fetched: results verified under an older set are not to be trusted any more. */
  get version(): number {
    return this.fetchedSets;
  }

  private mayFetch(): boolean {
    return this.now() - this.attemptedAt >= this.options.cooldownMs;
  }

  /** At most one fetch at a time and one per cool-down; concurrent callers share it. Never rejects. */
  private refresh(): Promise<void> {
    if (this.inFlight !== undefined) return this.inFlight;
    if (!this.mayFetch()) return Promise.resolve();
    this.attemptedAt = this.now();
    this.inFlight = this.fetchKeys()
      .then((jwks) => {
        this.keys = createLocalJWKSet(jwks);
        this.fetchedSets += 1;
        this.loadedAt = this.now();
        this.options.logger.info({ jwksUrl: this.options.url, keys: jwks.keys.length }, 'JWKS fetched');
      })
      .catch((error: unknown) => {
        this.options.logger.error(
          { jwksUrl: this.options.url, cause: (error as Error).message },
          this.keys === undefined ? 'JWKS fetch failed; no keys yet, JWTs are refused until it succeeds' : 'JWKS fetch failed; keeping the last good keys',
        );
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async fetchKeys(): Promise<JSONWebKeySet> {
    const response = await request(this.options.url, {
      dispatcher: this.agent,
      headers: { accept: 'application/json' },
      // No keep-alive: the next fetch is minutes away, and an idle socket would outlive a test's provider.
      reset: true,
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`the JWKS URL answered ${response.statusCode}`);
    }
    const body = (await response.body.json()) as JSONWebKeySet;
    // createLocalJWKSet throws on anything that is not a key set; checked here so a bad answer keeps the old keys.
    createLocalJWKSet(body);
    return body;
  }
}
