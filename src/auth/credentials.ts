import type { Request, Response } from 'express';
import type { Lease } from './lease';
import type { TenantKey } from '../tenant';
import type { Scope } from './scopes';

/**
 * What the Authorization header proved, resolved once per request and cached on res.locals, where the rate
 * limiter (its key), the scope check and the request log (the caller) read it.
 * `caller` names the caller in logs without the secret: `token:<n>`, `sha256:<digest prefix>` or `sub:<sub>`.
 * `lease` says how long they hold, for a response that outlives the request (a change stream).
 * `tenant`: the caller's own tenant, decided with the rest at load or verification; absent with tenants off.
 * `refusal`: which 401 an invalid token gets when it is not the plain invalid_token.
 */
export type Credentials =
  | { kind: 'missing' }
  | { kind: 'invalid'; message: string; refusal?: 'token_expired' | 'invalid_tenant_claim' }
  // The token could not be checked at all (no key set ever fetched): a 503, not a verdict on the token.
  | { kind: 'unavailable'; message: string; retryAfterS: number }
  | { kind: 'valid'; caller: string; rateKey: string; scopes: ReadonlySet<Scope>; lease: Lease; tenant?: TenantKey };

const MISSING: Credentials = { kind: 'missing' };

/** Where the identify middleware keeps them: the only access to res.locals.credentials. */
export function credentialsOf(res: Response | undefined): { credentials?: Credentials } {
  return (res?.locals ?? {}) as { credentials?: Credentials };
}

/** The credentials the identify middleware resolved for this request ("missing" before it ran). */
export function readCredentials(req: Request): Credentials {
  return credentialsOf(req.res).credentials ?? MISSING;
}

/** Whether the request's credentials grant `scope`: what a write may answer besides what its caller sent. */
export function grants(req: Request, scope: Scope): boolean {
  const credentials = readCredentials(req);
  return credentials.kind === 'valid' && credentials.scopes.has(scope);
}

/** How long this request's credentials hold; undefined when they are not valid (the request was refused). */
export function readLease(req: Request): Lease | undefined {
  const credentials = readCredentials(req);
  return credentials.kind === 'valid' ? credentials.lease : undefined;
}

/** Three base64url parts: a bearer of this shape is checked as a JWT when OIDC is configured. */
export const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;
