// Authentication and authorisation: static tokens (reloadable, stored as digests), OIDC JWT access tokens
// checked against the provider's JWKS, and the scope each request needs (given as data: the resources declare
// their scopes, src/resource.ts). It owns the Credentials of a request;
// it must never log, echo or store a presented token, and never block a static-token request on the network.
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { authorize, identify } from './auth.middleware';
import type { Access } from './scopes';
import type { StaticTokenStore } from './token-store';

export { grants, readCredentials, readLease, type Credentials } from './credentials';
export type { LapseReason, Lease } from './lease';
export { scopeList, type Access, type Scope } from './scopes';
export { startTokenRotation } from './token-rotation';
export { StaticTokenStore } from './token-store';

// Providers rotate keys over days; ten minutes bounds how long a withdrawn key is still trusted.
const JWKS_MAX_AGE_MS = 10 * 60_000;

export type Auth = { identify: RequestHandler; authorize: RequestHandler };

export function createAuth(config: Pick<Config, 'oidc' | 'tenants'>, tokens: StaticTokenStore, logger: Logger, access: Access): Auth {
  const { oidc, tenants } = config;
  if (oidc === undefined) return { identify: identify(tokens.current, undefined), authorize: authorize(access, tenants) };
  // jose and undici load only with OIDC configured: a static-token deployment does not carry their memory.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { ALGORITHMS, JwtVerifier } = require('./jwt-verifier') as typeof import('./jwt-verifier');
  const { JwksCache } = require('./jwks-cache') as typeof import('./jwks-cache');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const jwt = new JwtVerifier({
    issuer: oidc.issuer,
    audience: oidc.audience,
    clockToleranceS: oidc.clockToleranceS,
    unavailableRetryAfterS: oidc.jwksCooldownS,
    scopes: new Set(access.scopes),
    tenants,
    keys: new JwksCache({
      url: oidc.jwksUrl,
      cooldownMs: oidc.jwksCooldownS * 1000,
      maxAgeMs: JWKS_MAX_AGE_MS,
      timeoutMs: oidc.jwksTimeoutMs,
      algorithms: ALGORITHMS,
      logger,
    }),
  });
  return { identify: identify(tokens.current, jwt), authorize: authorize(access, tenants) };
}
