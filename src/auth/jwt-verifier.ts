import { jwtVerify } from 'jose';
import type { Credentials } from './credentials';
import type { JwksCache } from './jwks-cache';
import { scopesOfClaims } from './scopes';

// Asymmetric algorithms only: never `none`, never HMAC (which would let a public key act as the secret).
export const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/** A token shaped like a JWS compact serialisation: three base64url parts (the last empty for alg none). */

export type JwtOptions = { issuer: string; audience: string; clockToleranceS: number; keys: JwksCache; now?: () => number };

// A front end sends the same access token for minutes; remembering a verified one spares a signature check
// (CPU on the thread pool, docs/performance.md) on every request after the first. Only tokens that verified are kept, so forged ones cannot fill it; it is bounded all the same.
const VERIFIED_MAX = 10_000;

type Verified = { credentials: Extract<Credentials, { kind: 'valid' }>; expiresAtMs: number; keysVersion: number };

type Invalid = Extract<Credentials, { kind: 'invalid' }>;

/** Each failure says what was wrong with the token, never what the token is. */
function invalid(error: unknown, options: JwtOptions): Invalid {
  const { code, claim, reason } = error as { code?: unknown; claim?: unknown; reason?: unknown };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return { kind: 'invalid', expired: true, message: 'The access token has expired; get a new one from the identity provider.' };
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return { kind: 'invalid', message: `The access token has no "${String(claim)}" claim, which this service requires.` };
      if (claim === 'nbf') return { kind: 'invalid', message: 'The access token is not valid yet (its "nbf" is in the future).' };
      if (claim === 'iss') return { kind: 'invalid', message: `The access token comes from another issuer; this service accepts tokens issued by ${options.issuer}.` };
      if (claim === 'aud') return { kind: 'invalid', message: `The access token is meant for another audience; this service's audience is ${options.audience}.` };
      return { kind: 'invalid', message: `The access token's "${String(claim)}" claim is not valid.` };
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return { kind: 'invalid', message: `The access token's signing algorithm is not accepted; this service accepts ${ALGORITHMS.join(', ')}.` };
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return { kind: 'invalid', message: 'The access token\'s signature does not verify.' };
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return { kind: 'invalid', message: 'The access token is signed with a key the identity provider does not publish (unknown kid).' };
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return { kind: 'invalid', message: 'The access token names no kid and several of the identity provider\'s keys could have signed it.' };
    case 'ERR_PLANTS_JWKS_UNAVAILABLE':
      return { kind: 'invalid', message: 'The identity provider\'s signing keys cannot be fetched now, so no access token can be checked; retry later.' };
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JWKS_INVALID':
    case 'ERR_JWK_INVALID':
      return { kind: 'invalid', message: 'The bearer token looks like a JWT but is not a well-formed one.' };
    default:
      throw error;
  }
}

/** RFC 9068 access tokens: signature by a key of the provider's JWKS, issuer, audience, exp (required) and nbf. */
export class JwtVerifier {
  private readonly verified = new Map<string, Verified>();
  private readonly now: () => number;

  constructor(private readonly options: JwtOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * A token verified before is trusted again without a signature check until its exp (plus the tolerance), and
   * only while the key set it was verified under is still the current one: a fetch that withdraws a key also
   * withdraws the tokens it signed.
   */
  verify(token: string): Promise<Credentials> | Credentials {
    const known = this.verified.get(token);
    if (known !== undefined) {
      if (known.expiresAtMs > this.now() && known.keysVersion === this.options.keys.version) return known.credentials;
      this.verified.delete(token);
    }
    return this.verifySignature(token);
  }

  private async verifySignature(token: string): Promise<Credentials> {
    // Read before verifying: a key set fetched meanwhile makes this result one to check again, never the reverse.
    const keysVersion = this.options.keys.version;
    try {
      const { payload } = await jwtVerify(token, this.options.keys.getKey, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: this.options.clockToleranceS,
        requiredClaims: ['exp', 'sub'],
      });
      const sub = String(payload.sub).slice(0, 200);
      const credentials = { kind: 'valid', caller: `sub:${sub}`, rateKey: `jwt:${String(payload.iss)} ${sub}`, scopes: scopesOfClaims(payload) } as const;
      if (this.verified.size >= VERIFIED_MAX) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, {
        credentials,
        expiresAtMs: (Number(payload.exp) + this.options.clockToleranceS) * 1000,
        keysVersion,
      });
      return credentials;
    } catch (error) {
      return invalid(error, this.options);
    }
  }
}
