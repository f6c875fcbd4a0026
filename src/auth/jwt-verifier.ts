import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { tenantKeyOf, type TenantKey } from '../tenant';
import type { Credentials } from './credentials';
import type { JwksCache } from './jwks-cache';
import { expiringLease } from './lease';
import { scopesOfClaims } from './scopes';
import { isTenantName } from './tenant-names';

// Asymmetric algorithms only: never `none`, never HMAC (which would let a public key act as the secret).
export const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/** A token shaped like a JWS compact serialisation: three base64url parts (the last empty for alg none). */

export type JwtOptions = {
  issuer: string;
  audience: string;
  clockToleranceS: number;
  keys: JwksCache;
  /** Retry-After of the 503 answered while no key set was ever fetched: when the next fetch may be tried. */
  unavailableRetryAfterS: number;
  /** The scopes the resources declare; a token's others are ignored. */
  scopes: ReadonlySet<string>;
  /** With tenants on: the top-level claim that names the caller's tenant (TENANT_CLAIM), and TENANT_DEFAULT. */
  tenants?: { claim: string; defaultName?: string | undefined } | undefined;
  now?: () => number;
};

// A front end sends the same access token for minutes; remembering a verified one spares a signature check
// (CPU on the thread pool, docs/performance/request-path-costs.md) on every request after the first. Only tokens that verified are kept, so forged ones cannot fill it; it is bounded all the same.
const VERIFIED_MAX = 10_000;

// OpenID Connect Core 1.0 §2: sub "MUST NOT exceed 255 ASCII characters in length".
const SUB_MAX = 255;

type Verified = { credentials: Extract<Credentials, { kind: 'valid' }>; expiresAtMs: number; keysVersion: number };

type Refused = Exclude<Credentials, { kind: 'valid' }>;

const refused = (message: string): Refused => ({ kind: 'invalid', message });

const MALFORMED = refused('The bearer token looks like a JWT but is not a well-formed one.');
const NOT_CANONICAL = refused('The bearer token looks like a JWT but is not a well-formed one: each part must be base64url in its one canonical spelling.');
const BAD_SUB = refused(`The access token's "sub" claim must be a non-empty string of at most ${SUB_MAX} characters.`);
const IAT_AHEAD = refused('The access token\'s "iat" (issued at) is in the future; the issuer\'s clock is wrong or the token is not genuine.');

/**
 * The last character of a base64url part carries unused bits: four spellings of one signature decode to the
 * same bytes and all verify. Only the canonical one is accepted, so one token is one string (one cache slot).
 */
function canonical(token: string): boolean {
  return token.split('.').every((part) => Buffer.from(part, 'base64url').toString('base64url') === part);
}

/** `crit` lists header parameters a verifier must understand or refuse; this service understands none. */
function critOf(token: string): string[] | undefined {
  try {
    const { crit } = decodeProtectedHeader(token);
    return Array.isArray(crit) ? crit.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/** Each failure says what was wrong with the token, never what the token is. */
function refusal(error: unknown, token: string, options: JwtOptions): Refused {
  const { code, claim, reason } = error as { code?: unknown; claim?: unknown; reason?: unknown };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return { kind: 'invalid', refusal: 'token_expired', message: 'The access token has expired; get a new one from the identity provider.' };
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return refused(`The access token has no "${String(claim)}" claim, which this service requires.`);
      if (reason === 'invalid') return refused(`The access token's "${String(claim)}" claim must be a number (seconds since 1970-01-01 UTC).`);
      if (claim === 'nbf') return refused('The access token is not valid yet (its "nbf" is in the future).');
      if (claim === 'iss') return refused(`The access token comes from another issuer; this service accepts tokens issued by ${options.issuer}.`);
      if (claim === 'aud') return refused(`The access token is meant for another audience; this service's audience is ${options.audience}.`);
      return refused(`The access token's "${String(claim)}" claim is not valid.`);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
    case 'ERR_JWS_INVALID': {
      const crit = critOf(token);
      if (crit !== undefined) {
        return refused(`The access token's header marks ${crit.map((name) => `"${name}"`).join(', ')} as critical ("crit"); this service supports no such extension.`);
      }
      if (code === 'ERR_JWS_INVALID') return MALFORMED;
      return refused(`The access token's signing algorithm is not accepted; this service accepts ${ALGORITHMS.join(', ')}.`);
    }
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return refused('The access token\'s signature does not verify.');
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return refused('The access token is signed with a key the identity provider does not publish (unknown kid).');
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return refused('The access token names no kid and several of the identity provider\'s keys could have signed it.');
    case 'ERR_PLANTS_JWK_UNUSABLE':
      return refused('The access token names a key (kid) the identity provider publishes but this service cannot verify with.');
    case 'ERR_PLANTS_JWKS_UNAVAILABLE':
      return {
        kind: 'unavailable',
        message: 'The identity provider\'s signing keys cannot be fetched now, so no access token can be checked; retry later.',
        retryAfterS: options.unavailableRetryAfterS,
      };
    case 'ERR_JWT_INVALID':
    case 'ERR_JWKS_INVALID':
    case 'ERR_JWK_INVALID':
      return MALFORMED;
    default:
      throw error;
  }
}

/** What jose leaves to the caller: a usable sub (it checks presence only) and an iat not ahead of the clock. */
function claimProblem(payload: JWTPayload, nowS: number, toleranceS: number): Refused | undefined {
  const { sub, iat } = payload;
  if (typeof sub !== 'string' || sub === '' || sub.length > SUB_MAX) return BAD_SUB;
  if (iat !== undefined && iat > nowS + toleranceS) return IAT_AHEAD;
  return undefined;
}

/** RFC 9068 access tokens: signature by a key of the provider's JWKS, issuer, audience, exp (required), nbf, iat and sub. */
export class JwtVerifier {
  private readonly verified = new Map<string, Verified>();
  private readonly now: () => number;
  private readonly badTenant: Refused | undefined;

  constructor(private readonly options: JwtOptions) {
    this.now = options.now ?? Date.now;
    const claim = options.tenants?.claim;
    this.badTenant =
      claim === undefined
        ? undefined
        : { kind: 'invalid', refusal: 'invalid_tenant_claim', message: `The access token's "${claim}" claim (TENANT_CLAIM) must name its tenant: a non-empty string of at most 255 characters.` };
  }

  /** The tenant a verified token's claims name; undefined with tenants off, the refusal when the claim is unusable. */
  private tenantOf(payload: JWTPayload): TenantKey | Refused | undefined {
    const { tenants } = this.options;
    if (tenants === undefined) return undefined;
    const name = payload[tenants.claim];
    return isTenantName(name) ? tenantKeyOf(name, tenants.defaultName) : this.badTenant;
  }

  /**
   * A token verified before is trusted again without a signature check until its exp (plus the tolerance), and
   * only while no key has been withdrawn since it was verified: a fetch that withdraws a key also withdraws
   * the tokens it may have signed.
   */
  remembered(token: string): Credentials | undefined {
    const known = this.verified.get(token);
    if (known === undefined) return undefined;
    if (known.expiresAtMs > this.now() && known.keysVersion === this.options.keys.version) return known.credentials;
    this.verified.delete(token);
    return undefined;
  }

  /** The full check of a token not remembered: its spelling, then signature and claims. */
  verify(token: string): Promise<Credentials> | Credentials {
    if (!canonical(token)) return NOT_CANONICAL;
    return this.verifySignature(token);
  }

  private async verifySignature(token: string): Promise<Credentials> {
    // Read before verifying: a key withdrawn meanwhile makes this result one to check again, never the reverse.
    const keysVersion = this.options.keys.version;
    const { clockToleranceS } = this.options;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.options.keys.getKey, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: clockToleranceS,
        currentDate: new Date(this.now()),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      return refusal(error, token, this.options);
    }
    const problem = claimProblem(payload, this.now() / 1000, clockToleranceS);
    if (problem !== undefined) return problem;
    // Decided here, once: a remembered token carries its tenant with its credentials.
    const tenant = this.tenantOf(payload);
    if (typeof tenant === 'object') return tenant;
    const sub = payload.sub as string;
    // Accepted until exp plus the tolerance, so a stream opened with it ends when a new request with it is refused.
    const expiresAtMs = (Number(payload.exp) + clockToleranceS) * 1000;
    const lease = expiringLease(expiresAtMs, this.now);
    const credentials = { kind: 'valid', caller: `sub:${sub}`, rateKey: `jwt:${String(payload.iss)} ${sub}`, scopes: scopesOfClaims(payload, this.options.scopes), lease, tenant } as const;
    if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { credentials, expiresAtMs, keysVersion });
    return credentials;
  }
}
