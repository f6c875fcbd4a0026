import type { RequestHandler } from 'express';
import { TOKEN_SYNTAX } from '../config';
import { AppError } from '../errors';
import { credentialsOf, JWT_SHAPE, readCredentials, type Credentials } from './credentials';
import type { JwtVerifier } from './jwt-verifier';
import type { StaticTokenSet } from './static-tokens';
import type { Access } from './scopes';

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

/** RFC 6750 §3: 401 with a Bearer challenge (error="invalid_token" once a token was presented), 403 for a missing scope. */
export function authorize(access: Access): RequestHandler {
  return (req, _res, next) => {
    const credentials = readCredentials(req);
    if (credentials.kind === 'missing') {
      throw new AppError('missing_credentials', undefined, { headers: { 'WWW-Authenticate': REALM } });
    }
    if (credentials.kind === 'unavailable') {
      throw new AppError('auth_unavailable', credentials.message, { headers: { 'Retry-After': String(credentials.retryAfterS) } });
    }
    if (credentials.kind === 'invalid') {
      throw new AppError(credentials.expired ? 'token_expired' : 'invalid_token', credentials.message, { headers: INVALID_TOKEN });
    }
    const scope = access.scopeOf(req.method, req.path);
    if (scope !== undefined && !credentials.scopes.has(scope)) {
      throw new AppError('insufficient_scope', `This token lacks the ${scope} scope, which ${req.method} needs.`, {
        headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }
    next();
  };
}
