import type { RequestHandler, Response } from 'express';
import { TOKEN_SYNTAX, type TenantsConfig } from '../config';
import { AppError } from '../errors';
import { localsOf } from '../request-locals';
import { tenantKeyOf } from '../tenant';
import { credentialsOf, JWT_SHAPE, readCredentials, type Credentials } from './credentials';
import type { JwtVerifier } from './jwt-verifier';
import type { StaticTokenSet } from './static-tokens';
import { adminScopeOf, isAdminScope, type Access, type Scope } from './scopes';
import { decodeTenantName } from './tenant-names';

// The scheme and whatever follows it: anything presented after "Bearer " is a token, well-formed or not.
const BEARER = /^bearer +(.*?) *$/i;
const MALFORMED: Credentials = { kind: 'invalid', message: 'The bearer token is not valid: it has characters RFC 6750 does not allow in a token.' };
const REALM = 'Bearer realm="plants"';
const INVALID_TOKEN = { 'WWW-Authenticate': `${REALM}, error="invalid_token"` };
const MISSING: Credentials = { kind: 'missing' };
const UNKNOWN_STATIC: Credentials = { kind: 'invalid', message: 'The bearer token is not valid.' };

/**
 * Resolves the Authorization header into Credentials on res.locals, once per request, before the rate
 * limiter (which keys on them) and the scope check. A static token is a synchronous digest lookup; only a
 * bearer shaped like a JWT that is no static token, when OIDC is configured, takes the asynchronous path.
 */
export function identify(staticTokens: () => StaticTokenSet, jwt: JwtVerifier | undefined): RequestHandler {
  return (req, res, next) => {
    const locals = credentialsOf(res);
    const header = req.headers.authorization;
    const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
    if (token === undefined || token === '') {
      locals.credentials = MISSING;
    } else if (!TOKEN_SYNTAX.test(token)) {
      locals.credentials = MALFORMED;
    } else if (jwt !== undefined && JWT_SHAPE.test(token)) {
      // A JWT verified before first (a map lookup, the usual case); then the static tokens, so one shaped like a
      // JWT (three dot-separated parts) still authenticates as itself; then the signature check.
      const known = jwt.remembered(token) ?? staticTokens().match(token);
      if (known !== undefined) {
        res.locals.credentials = known;
        next();
        return;
      }
      const verified = jwt.verify(token);
      if (!(verified instanceof Promise)) {
        locals.credentials = verified;
        next();
        return;
      }
      return verified.then((credentials) => {
        locals.credentials = credentials;
        next();
      });
    } else {
      locals.credentials = staticTokens().match(token) ?? UNKNOWN_STATIC;
    }
    next();
  };
}

type Valid = Extract<Credentials, { kind: 'valid' }>;

/**
 * Act-As-Tenant: an admin (the resource's `:admin` scope) acts in the tenant the header names, percent-encoded.
 * Refused when tenants are off (400), to a caller without the admin scope whatever the value (403), and for a
 * value that names no tenant (400). The name goes on res.locals for the request log's audit field.
 */
function actAs(header: string, credentials: Valid, scope: Scope | undefined, tenants: TenantsConfig | undefined, res: Response): void {
  if (tenants === undefined) throw new AppError('tenants_off');
  // A request that needs no scope (routing answers it) still needs some admin scope to carry the header.
  const admin = scope === undefined ? [...credentials.scopes].some(isAdminScope) : credentials.scopes.has(adminScopeOf(scope));
  if (!admin) {
    if (scope === undefined) throw new AppError('act_as_tenant_forbidden', 'Act-As-Tenant: acting in another tenant needs an admin scope, which this token lacks.');
    const needed = adminScopeOf(scope);
    throw new AppError('act_as_tenant_forbidden', `Act-As-Tenant: acting in another tenant needs the ${needed} scope, which this token lacks.`, {
      headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${needed}"` },
    });
  }
  const name = decodeTenantName(header);
  if (name === undefined) throw new AppError('invalid_act_as_tenant');
  const locals = localsOf(res);
  locals.tenant = tenantKeyOf(name, tenants.defaultName);
  locals.actAsTenant = name;
}

/**
 * RFC 6750 §3: 401 with a Bearer challenge (error="invalid_token" once a token was presented), 403 for a missing
 * scope. With tenants on, it sets the tenant the request acts in: the caller's own, or Act-As-Tenant's.
 */
export function authorize(access: Access, tenants: TenantsConfig | undefined): RequestHandler {
  return (req, res, next) => {
    const credentials = readCredentials(req);
    if (credentials.kind === 'missing') {
      throw new AppError('missing_credentials', undefined, { headers: { 'WWW-Authenticate': REALM } });
    }
    if (credentials.kind === 'unavailable') {
      throw new AppError('auth_unavailable', credentials.message, { headers: { 'Retry-After': String(credentials.retryAfterS) } });
    }
    if (credentials.kind === 'invalid') {
      throw new AppError(credentials.refusal ?? 'invalid_token', credentials.message, { headers: INVALID_TOKEN });
    }
    const scope = access.scopeOf(req.method, req.path);
    const header = req.headers['act-as-tenant'];
    // Node joins a repeated header with ", ", which no percent-encoded name holds: refused as malformed.
    if (header !== undefined) actAs(typeof header === 'string' ? header : header.join(', '), credentials, scope, tenants, res);
    else if (credentials.tenant !== undefined) localsOf(res).tenant = credentials.tenant;
    if (scope !== undefined && !credentials.scopes.has(scope)) {
      throw new AppError('insufficient_scope', `This token lacks the ${scope} scope, which ${req.method} needs.`, {
        headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }
    next();
  };
}
