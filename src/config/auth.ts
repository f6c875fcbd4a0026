// Who may call: static tokens from the environment or a file, JWT access tokens from an identity provider, and
// the rule that production needs one of them.
import { z } from 'zod';
import { ConfigError } from './config-error';
import { integer, jwksUrl, list, type Parsed } from './fields';
import { serverVariables } from './server';

export const MIN_TOKEN_LENGTH = 32;

// RFC 6750 2.1 b64token: a client can only present such a token in an Authorization header.
export const TOKEN_SYNTAX = /^[A-Za-z0-9\-._~+/]+=*$/;

export const authVariables = {
  AUTH_TOKENS: list.optional().describe(
    'Accepted bearer tokens, comma-separated, each at least 32 characters of RFC 6750 token syntax (`A-Z a-z 0-9 - . _ ~ + /`, `=` at the end). With neither this nor `AUTH_TOKENS_FILE` outside production, one token is generated and logged at start.',
  ),
  AUTH_TOKENS_FILE: z.string().optional().describe(
    'A file of static tokens, one a line (blank lines and `#` lines skipped), e.g. a container secret: the token itself or `sha256:<64 hex digits>` of it (`npm run token` prints both), then optional scopes (`plants:read plants:write`; none means both). Accepted together with `AUTH_TOKENS`; re-read on SIGHUP and when the file changes (a file that does not parse keeps the previous set and logs an error).',
  ),
  AUTH_JWKS_URL: jwksUrl.optional().describe(
    'The identity provider\'s JWKS URL (Keycloak, Auth0, …): turns on JWT access tokens. `https://`, or `http://` on loopback only. Set with `AUTH_ISSUER` and `AUTH_AUDIENCE`, or not at all.',
  ),
  AUTH_ISSUER: z.string().optional().describe(
    'The issuer (`iss`) a JWT access token must carry; required with `AUTH_JWKS_URL`.',
  ),
  AUTH_AUDIENCE: z.string().optional().describe(
    'The audience (`aud`) a JWT access token must carry; required with `AUTH_JWKS_URL`.',
  ),
  AUTH_CLOCK_TOLERANCE_S: integer(0, 300).prefault('30').describe(
    'Seconds of clock skew allowed when checking a JWT\'s `exp`, `nbf` and `iat` (0 to 300).',
  ),
  // At least a second: with none, every token naming an unknown kid would be a fetch from the provider.
  AUTH_JWKS_COOLDOWN_S: integer(1, 3600).prefault('30').describe(
    'Seconds between two fetches of the JWKS at least (a token with an unknown `kid` triggers a fetch); 1 to 3600.',
  ),
  AUTH_JWKS_TIMEOUT_MS: integer(100, 60_000).prefault('5000').describe(
    'One JWKS fetch, connection, headers and body (1 MiB at most), within this (milliseconds); also the longest a request waits for keys. Past it the fetch has failed: the last good keys stay, or with none yet JWTs get 503 (50310).',
  ),
  // Read, not owned: the server slice describes it.
  NODE_ENV: serverVariables.NODE_ENV,
};

type AuthEnv = Parsed<typeof authVariables>;

export type TokenSource = 'AUTH_TOKENS' | 'AUTH_TOKENS_FILE' | 'AUTH_JWKS_URL' | 'generated';

function checkTokens(tokens: string[]): void {
  const tooShort = tokens.findIndex((token) => token.length < MIN_TOKEN_LENGTH);
  if (tooShort !== -1) {
    throw new ConfigError(`AUTH_TOKENS: token ${tooShort + 1} is shorter than ${MIN_TOKEN_LENGTH} characters`);
  }
  if (tokens.some((token) => /\s/.test(token))) {
    throw new ConfigError('AUTH_TOKENS: a token must not contain white space');
  }
  const malformed = tokens.findIndex((token) => !TOKEN_SYNTAX.test(token));
  if (malformed !== -1) {
    throw new ConfigError(
      `AUTH_TOKENS: token ${malformed + 1} has characters outside RFC 6750's token syntax (A-Z a-z 0-9 - . _ ~ + / and = at the end)`,
    );
  }
}

/** Logged once per start when no token is configured (by the supervisor at WORKERS above 1, never by each worker). */
export const GENERATED_TOKEN_WARNING = 'AUTH_TOKENS and AUTH_TOKENS_FILE are not set: generated this bearer token, valid until the process stops';

// The file itself is read by src/auth (StaticTokenStore), at start and again on each rotation.
function resolveTokens(
  env: AuthEnv,
  generate: () => string,
): { authTokens: string[]; authTokensFile: string | undefined; tokenSource: TokenSource } {
  const fromEnv = env.AUTH_TOKENS ?? [];
  checkTokens(fromEnv);
  const authTokensFile = env.AUTH_TOKENS_FILE;
  if (authTokensFile !== undefined) return { authTokens: fromEnv, authTokensFile, tokenSource: 'AUTH_TOKENS_FILE' };
  if (fromEnv.length > 0) return { authTokens: fromEnv, authTokensFile, tokenSource: 'AUTH_TOKENS' };
  if (env.AUTH_JWKS_URL !== undefined) return { authTokens: [], authTokensFile, tokenSource: 'AUTH_JWKS_URL' };
  if (env.NODE_ENV === 'production') {
    throw new ConfigError('AUTH_TOKENS or AUTH_TOKENS_FILE must be set when NODE_ENV=production (or AUTH_JWKS_URL to accept JWT access tokens only)');
  }
  return { authTokens: [generate()], authTokensFile, tokenSource: 'generated' };
}

function resolveOidc(env: AuthEnv) {
  const { AUTH_JWKS_URL: jwksUrl, AUTH_ISSUER: issuer, AUTH_AUDIENCE: audience } = env;
  if (jwksUrl === undefined && issuer === undefined && audience === undefined) return undefined;
  if (jwksUrl === undefined || issuer === undefined || audience === undefined) {
    throw new ConfigError('AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE go together: set all three to accept JWT access tokens, or none');
  }
  return Object.freeze({
    jwksUrl,
    issuer,
    audience,
    clockToleranceS: env.AUTH_CLOCK_TOLERANCE_S,
    jwksCooldownS: env.AUTH_JWKS_COOLDOWN_S,
    jwksTimeoutMs: env.AUTH_JWKS_TIMEOUT_MS,
  });
}

/** `generate` makes the one token used when no source is set outside production. */
export function authSettings(env: AuthEnv, generate: () => string) {
  return { ...resolveTokens(env, generate), oidc: resolveOidc(env) };
}
