import { createLocalJWKSet, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { Agent, request } from 'undici';
import type { Logger } from '../logger';
import { keyIdentity, vetKeys } from './jwks-keys';

type LocalKeys = ReturnType<typeof createLocalJWKSet>;

/** Thrown to jose's key lookup when no key set was ever fetched: the answer is then a 503, not a verdict on the token. */
export class JwksUnavailableError extends Error {
  readonly code = 'ERR_PLANTS_JWKS_UNAVAILABLE';
}

/** Thrown to jose's key lookup for a kid whose key the provider publishes but this service cannot verify with. */
export class UnusableKeyError extends Error {
  readonly code = 'ERR_PLANTS_JWK_UNUSABLE';
}

export type JwksOptions = {
  url: string;
  cooldownMs: number;
  maxAgeMs: number;
  /** The whole fetch, connection, headers and body, within this; also the longest a request waits for keys. */
  timeoutMs: number;
  /** The algorithms tokens may use: keys for them are vetted at fetch. */
  algorithms: readonly string[];
  logger: Logger;
  now?: () => number;
};

// Public providers' key sets are a few KiB; a megabyte leaves room for dozens of keys with certificate chains
// and bounds what a hostile or broken answer can cost in memory.
export const JWKS_MAX_BYTES = 1024 * 1024;

/**
 * The identity provider's signing keys (JWKS), fetched on first use and kept. Refetched when older than maxAge
 * (in the background: requests keep using the keys held) and on a token whose kid is unknown, but never more
 * than once per cool-down, so a flood of forged kids cannot turn into a flood of fetches. A failed fetch keeps
 * the last good keys; with none ever fetched, tokens fail at once with JwksUnavailableError instead of waiting.
 */
export class JwksCache {
  private keys: LocalKeys | undefined;
  private identities = new Set<string>();
  private unusable = new Map<string, string>();
  private readonly warned = new Set<string>();
  private withdrawals = 0;
  private loadedAt = -Infinity;
  private attemptedAt = -Infinity;
  private inFlight: Promise<void> | undefined;
  private readonly agent: Agent;
  private readonly now: () => number;

  constructor(private readonly options: JwksOptions) {
    this.now = options.now ?? Date.now;
    // One connection is plenty for a fetch every few minutes; the deadline in fetchKeys bounds the rest.
    this.agent = new Agent({ connections: 1, connectTimeout: options.timeoutMs });
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
      if ((error as { code?: unknown }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
      const problem = header.kid === undefined ? undefined : this.unusable.get(header.kid);
      if (problem !== undefined) throw new UnusableKeyError(problem);
      if (!this.mayFetch()) throw error;
      await this.refresh();
      return (this.keys ?? keys)(header, token);
    }
  };

  /**
   * Goes up with every fetch that withdraws a key: a result verified under an older set may rest on that key.
   * A fetch that returns the same keys, or adds some, leaves it as it is.
   */
  get version(): number {
    return this.withdrawals;
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
      .then((jwks) => this.install(jwks))
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

  private async install(jwks: JSONWebKeySet): Promise<void> {
    const { usable, unusable } = await vetKeys(jwks, this.options.algorithms);
    for (const [kid, problem] of unusable) {
      // One line per bad key, when first seen: it stays set aside on every fetch that still publishes it.
      if (this.warned.has(`${kid} ${problem}`)) continue;
      this.warned.add(`${kid} ${problem}`);
      this.options.logger.warn({ jwksUrl: this.options.url, kid, problem }, 'JWKS key unusable; tokens naming its kid are refused');
    }
    const identities = new Set(usable.keys.map(keyIdentity));
    if ([...this.identities].some((identity) => !identities.has(identity))) this.withdrawals += 1;
    this.keys = createLocalJWKSet(usable);
    this.identities = identities;
    this.unusable = unusable;
    this.loadedAt = this.now();
    this.options.logger.info({ jwksUrl: this.options.url, keys: usable.keys.length, unusable: unusable.size }, 'JWKS fetched');
  }

  /** One deadline for the whole fetch: a provider that trickles its answer a byte at a time is cut off with it. */
  private async fetchKeys(): Promise<JSONWebKeySet> {
    const { url, timeoutMs } = this.options;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const text = await Promise.race([
        this.download(url, deadline.signal),
        new Promise<never>((_resolve, reject) => deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error), { once: true })),
      ]);
      let body: JSONWebKeySet;
      try {
        body = JSON.parse(text) as JSONWebKeySet;
      } catch {
        throw new Error('the JWKS URL answered something that is not JSON');
      }
      // createLocalJWKSet throws on anything that is not a key set; checked here so a bad answer keeps the old keys.
      createLocalJWKSet(body);
      return body;
    } finally {
      clearTimeout(timer);
      deadline.abort();
    }
  }

  private async download(url: string, signal: AbortSignal): Promise<string> {
    const response = await request(url, {
      dispatcher: this.agent,
      signal,
      headers: { accept: 'application/json' },
      // No keep-alive: the next fetch is minutes away, and an idle socket would outlive a test's provider.
      reset: true,
    });
    if (response.statusCode !== 200) {
      response.body.destroy();
      throw new Error(`the JWKS URL answered ${response.statusCode}`);
    }
    const declared = Number(response.headers['content-length'] ?? 0);
    const tooLarge = () => new Error(`the JWKS answer is larger than ${JWKS_MAX_BYTES} bytes`);
    if (declared > JWKS_MAX_BYTES) {
      response.body.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > JWKS_MAX_BYTES) {
        response.body.destroy();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}
