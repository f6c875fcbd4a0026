import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { AppError } from '../errors';

export type Credentials = { kind: 'missing' } | { kind: 'invalid' } | { kind: 'valid'; tokenIndex: number };

// The scheme and whatever follows it: anything presented after "Bearer " is a token, well-formed or not.
const BEARER = /^bearer +(.*?) *$/i;
// RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]+=*$/;
const REALM = 'Bearer realm="plants"';

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Reads the Authorization header once per request (cached on res.locals for the rate limiter and the auth check).
 * Tokens are compared as SHA-256 digests with timingSafeEqual, against every accepted token, so neither the
 * length nor the position of a match shows in the timing.
 */
export function createCredentialReader(tokens: readonly string[]): (req: Request) => Credentials {
  const accepted = tokens.map(digest);
  return (req) => {
    const cached = req.res?.locals.credentials as Credentials | undefined;
    if (cached !== undefined) return cached;
    const header = req.headers.authorization;
    const match = header === undefined ? null : BEARER.exec(header);
    let credentials: Credentials = { kind: 'missing' };
    if (match?.[1] !== undefined && match[1] !== '' && !TOKEN_SYNTAX.test(match[1])) {
      credentials = { kind: 'invalid' };
    } else if (match?.[1] !== undefined && match[1] !== '') {
      const presented = digest(match[1]);
      let tokenIndex = -1;
      accepted.forEach((candidate, index) => {
        if (timingSafeEqual(candidate, presented)) tokenIndex = index;
      });
      credentials = tokenIndex === -1 ? { kind: 'invalid' } : { kind: 'valid', tokenIndex };
    }
    if (req.res !== undefined) req.res.locals.credentials = credentials;
    return credentials;
  };
}

/** RFC 6750: 401 with a Bearer challenge; error="invalid_token" only when a token was presented. */
export function bearerAuth(readCredentials: (req: Request) => Credentials): RequestHandler {
  return (req, _res, next) => {
    const credentials = readCredentials(req);
    if (credentials.kind === 'missing') {
      throw new AppError('missing_credentials', undefined, { headers: { 'WWW-Authenticate': REALM } });
    }
    if (credentials.kind === 'invalid') {
      throw new AppError('invalid_token', undefined, {
        headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token"` },
      });
    }
    next();
  };
}
