import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MIN_TOKEN_LENGTH, TOKEN_SYNTAX, type TenantsConfig, type TokenSource } from '../config';
import { tenantKeyOf, type TenantKey } from '../tenant';
import type { Credentials } from './credentials';
import type { Lease } from './lease';
import { defaultScopes, scopeList, type Scope } from './scopes';
import { decodeTenantName } from './tenant-names';

type ValidCredentials = Extract<Credentials, { kind: 'valid' }>;

export class TokenFileError extends Error {}

const sha256 = (token: string): Buffer => createHash('sha256').update(token).digest();
const DIGEST_LINE = /^sha256:([0-9a-f]{64})$/i;

/** One token as read: its digest, its name in logs, its scopes, its tenant's name (a file line's `tenant=`). */
type Line = { digest: Buffer; caller: string; scopes: ReadonlySet<Scope>; tenant?: string; where: string };
type Entry = { digest: Buffer; credentials: ValidCredentials };

/**
 * The lease of a static token, by its digest and the tenant it acts in: only the store that reloads the tokens
 * knows when one is revoked or moved to another tenant.
 */
export type LeaseOf = (digest: Buffer, tenant: TenantKey | undefined) => Lease;

/** Where the tokens come from, and the tenants setting that decides whether each must name its tenant. */
export type StaticTokenSource = {
  authTokens: readonly string[];
  authTokensFile: string | undefined;
  tokenSource?: TokenSource;
  tenants?: TenantsConfig | undefined;
};

function entry({ digest, caller, scopes, tenant }: Line, tenants: TenantsConfig | undefined, leaseOf: LeaseOf): Entry {
  // With tenants off a line's tenant= is ignored: every request is in the shared tenant.
  const key = tenants === undefined || tenant === undefined ? undefined : tenantKeyOf(tenant, tenants.defaultName);
  // The rate key is the digest, not the position: a reload that reorders the file keeps each token's count.
  const rateKey = `token:${digest.toString('hex', 0, 8)}`;
  return { digest, credentials: { kind: 'valid', caller, rateKey, scopes, lease: leaseOf(digest, key), tenant: key } };
}

/** The `tenant=<percent-encoded name>` among a line's words, checked whether tenants are on or not. */
function tenantOfLine(words: readonly string[], where: string): string | undefined {
  const named = words.filter((word) => word.startsWith('tenant='));
  if (named.length > 1) throw new TokenFileError(`${where}: names tenant= more than once`);
  const [word] = named;
  if (word === undefined) return undefined;
  const name = decodeTenantName(word.slice('tenant='.length));
  if (name === undefined) {
    throw new TokenFileError(`${where}: tenant= must be followed by the tenant's name percent-encoded as UTF-8 (1 to 255 characters, a space as %20)`);
  }
  return name;
}

/**
 * One line of AUTH_TOKENS_FILE: `<token>` or `sha256:<64 hex digits>`, then optional scopes separated by
 * spaces (none means every scope but the admin ones) and `tenant=<name>`. `position` is the token's 1-based
 * place among all static tokens, the caller name of a plain-text token in logs; a digest line is named by the
 * digest's first 8 hex digits.
 */
function parseLine(line: string, where: string, position: number, known: readonly Scope[], all: ReadonlySet<Scope>): Line {
  const [secret = '', ...words] = line.split(/\s+/);
  const tenant = tenantOfLine(words, where);
  const scopeNames = words.filter((word) => !word.startsWith('tenant='));
  const unknown = scopeNames.find((name) => !known.includes(name));
  if (unknown !== undefined) throw new TokenFileError(`${where}: unknown scope "${unknown}"; the scopes are ${scopeList(known)}`);
  const scopes = scopeNames.length === 0 ? all : new Set(scopeNames);
  const named = tenant === undefined ? { where } : { where, tenant };
  const digestLine = DIGEST_LINE.exec(secret);
  if (digestLine?.[1] !== undefined) {
    const hex = digestLine[1].toLowerCase();
    return { digest: Buffer.from(hex, 'hex'), caller: `sha256:${hex.slice(0, 8)}`, scopes, ...named };
  }
  if (secret.toLowerCase().startsWith('sha256:')) throw new TokenFileError(`${where}: sha256: must be followed by 64 hex digits`);
  if (secret.length < MIN_TOKEN_LENGTH) throw new TokenFileError(`${where}: the token is shorter than ${MIN_TOKEN_LENGTH} characters`);
  if (!TOKEN_SYNTAX.test(secret)) {
    throw new TokenFileError(`${where}: the token has characters outside RFC 6750's token syntax (A-Z a-z 0-9 - . _ ~ + / and = at the end)`);
  }
  return { digest: sha256(secret), caller: `token:${position}`, scopes, ...named };
}

/** The file's tokens; throws TokenFileError naming AUTH_TOKENS_FILE and the line at fault. */
function readTokenFile(file: string, firstPosition: number, known: readonly Scope[], all: ReadonlySet<Scope>): Line[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new TokenFileError(`AUTH_TOKENS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const tokens: Line[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    tokens.push(parseLine(line, `AUTH_TOKENS_FILE line ${index + 1}`, firstPosition + tokens.length, known, all));
  });
  if (tokens.length === 0) throw new TokenFileError(`AUTH_TOKENS_FILE: ${file} holds no token`);
  return tokens;
}

/**
 * An immutable set of static tokens with their digests computed once at load. A presented token is hashed
 * once and compared with every digest by timingSafeEqual, so neither its length nor the position of a match
 * shows in the timing; a match returns credentials built at load, so a request allocates nothing here.
 */
export class StaticTokenSet {
  readonly size: number;
  private readonly entries: readonly Entry[];

  constructor(entries: readonly Entry[]) {
    this.entries = entries;
    this.size = entries.length;
  }

  match(token: string): ValidCredentials | undefined {
    return this.matchDigest(sha256(token));
  }

  matchDigest(presented: Buffer): ValidCredentials | undefined {
    let found: ValidCredentials | undefined;
    for (const candidate of this.entries) {
      if (timingSafeEqual(candidate.digest, presented)) found = candidate.credentials;
    }
    return found;
  }
}

/**
 * With tenants on, every static token must name its tenant: only a file line can, so AUTH_TOKENS and the
 * generated development token refuse the start, and so does a line without `tenant=` (a reload: the old set stays).
 */
function requireTenants(source: StaticTokenSource, lines: readonly Line[]): void {
  if (source.tenants === undefined) return;
  if (source.tokenSource === 'generated') {
    throw new TokenFileError('TENANT_CLAIM: the generated development token names no tenant; set AUTH_TOKENS_FILE with tenant=<name> on each line (npm run token -- tenant=<name>), or AUTH_JWKS_URL');
  }
  if (source.authTokens.length > 0) {
    throw new TokenFileError('AUTH_TOKENS: a token there cannot name a tenant, and TENANT_CLAIM is set; put each in AUTH_TOKENS_FILE with tenant=<name> (npm run token -- tenant=<name>)');
  }
  const unnamed = lines.find((line) => line.tenant === undefined);
  if (unnamed !== undefined) throw new TokenFileError(`${unnamed.where}: names no tenant; add tenant=<name>`);
}

/** AUTH_TOKENS (plain text, every scope but the admin ones) followed by the lines of AUTH_TOKENS_FILE, if set. */
export function loadStaticTokens(source: StaticTokenSource, scopes: readonly Scope[], leaseOf: LeaseOf): StaticTokenSet {
  const all = defaultScopes(scopes);
  const fromEnv = source.authTokens.map((token, index): Line => ({ digest: sha256(token), caller: `token:${index + 1}`, scopes: all, where: `AUTH_TOKENS token ${index + 1}` }));
  const fromFile = source.authTokensFile === undefined ? [] : readTokenFile(source.authTokensFile, fromEnv.length + 1, scopes, all);
  const lines = [...fromEnv, ...fromFile];
  requireTenants(source, lines);
  return new StaticTokenSet(lines.map((line) => entry(line, source.tenants, leaseOf)));
}
