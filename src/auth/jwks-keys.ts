// Vets a fetched key set before it is used: a key this service cannot verify with (an RSA modulus under 2,048
// bits, a JWK that does not import) is set aside with its kid, so a token naming it is refused as a 401, not
// turned into an exception per request. Never throws for a bad key; only for a document that is no key set.
import { importJWK, type JSONWebKeySet, type JWK } from 'jose';

/** The JWS algorithm a key would verify with here: its own `alg`, or the one this service accepts for its type. */
function algorithmOf(jwk: JWK): string | undefined {
  if (typeof jwk.alg === 'string') return jwk.alg;
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  return undefined;
}

// jose checks the modulus when it verifies (RFC 7518 3.3: 2048 bits or larger), which is too late: one
// exception per request. Checked here once per fetch instead.
const MIN_RSA_BITS = 2048;

async function problemOf(jwk: JWK, algorithms: readonly string[]): Promise<string | undefined> {
  const alg = algorithmOf(jwk);
  // A key for encryption, or for an algorithm refused anyway, is never chosen to verify: nothing to vet.
  if (jwk.use === 'enc' || alg === undefined || !algorithms.includes(alg)) return undefined;
  try {
    const key = await importJWK(jwk, alg);
    const bits = (key as { algorithm?: { modulusLength?: number } }).algorithm ?? {};
    if (jwk.kty === 'RSA' && (bits.modulusLength ?? 0) < MIN_RSA_BITS) return `an RSA key of ${bits.modulusLength ?? 0} bits; ${MIN_RSA_BITS} at least`;
    return undefined;
  } catch (error) {
    return `it does not import as a ${alg} key (${(error as Error).message})`;
  }
}

export type VettedKeys = { usable: JSONWebKeySet; unusable: Map<string, string> };

/** Splits a key set into the keys that verify here and the rest, by kid (a key without a kid is named by its index). */
export async function vetKeys(jwks: JSONWebKeySet, algorithms: readonly string[]): Promise<VettedKeys> {
  const usable: JWK[] = [];
  const unusable = new Map<string, string>();
  for (const [index, jwk] of jwks.keys.entries()) {
    const problem = await problemOf(jwk, algorithms);
    if (problem === undefined) usable.push(jwk);
    else unusable.set(typeof jwk.kid === 'string' ? jwk.kid : `#${index}`, problem);
  }
  return { usable: { keys: usable }, unusable };
}

/** One key's identity across fetches: its JSON with members in a fixed order. */
export function keyIdentity(jwk: JWK): string {
  const members = jwk as Record<string, unknown>;
  return JSON.stringify(Object.keys(members).sort().map((name) => [name, members[name]]));
}
