import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MIN_TOKEN_LENGTH, TOKEN_SYNTAX } from '../config';
import type { Credentials } from './credentials';
import type { Lease } from './lease';
import { scopeList, type Scope } from './scopes';

type ValidCredentials = Extract<Credentials, { kind: 'valid' }>;

export class TokenFileError extends Error {}

const sha256 = (token: string): Buffer => createHash('sha256').update(token).digest();
const DIGEST_LINE = /^sha256:([0-9a-f]{64})$/i;

/** One token as read: its digest, its name in logs, its scopes. */
type Line = { digest: Buffer; caller: string; scopes: ReadonlySet<Scope> };
type Entry = { digest: Buffer; credentials: ValidCredentials };

/** The lease of a static token, by its digest: only the store that reloads the tokens knows when one is revoked. */
export type LeaseOf = (digest: Buffer) => Lease;

function entry({ digest, caller, scopes }: Line, leaseOf: LeaseOf): Entry {
  // The rate key is the digest, not the position: a reload that reorders the file keeps each token's count.
  return { digest, credentials: { kind: 'valid', caller, rateKey: `token:${digest.toString('hex', 0, 8)}`, scopes, lease: leaseOf(digest) } };
}

/**
 * One line of AUTH_TOKENS_FILE: `<token>` or `sha256:<64 hex digits>`, then optional scopes separated by
 * spaces (none means every scope). `position` is the token's 1-based place among all static tokens, the caller
 * name of a plain-text token in logs; a digest line is named by the digest's first 8 hex digits.
 */
function parseLine(line: string, where: string, position: number, known: readonly Scope[], all: ReadonlySet<Scope>): Line {
  const [secret = '', ...scopeNames] = line.split(/\s+/);
  const unknown = scopeNames.find((name) => !known.includes(name));
  if (unknown !== undefined) throw new TokenFileError(`${where}: unknown scope "${unknown}"; the scopes are ${scopeList(known)}`);
  const scopes = scopeNames.length === 0 ? all : new Set(scopeNames);
  const digestLine = DIGEST_LINE.exec(secret);
  if (digestLine?.[1] !== undefined) {
    const hex = digestLine[1].toLowerCase();
    return { digest: Buffer.from(hex, 'hex'), caller: `sha256:${hex.slice(0, 8)}`, scopes };
  }
  if (secret.toLowerCase().startsWith('sha256:')) throw new TokenFileError(`${where}: sha256: must be followed by 64 hex digits`);
  if (secret.length < MIN_TOKEN_LENGTH) throw new TokenFileError(`${where}: the token is shorter than ${MIN_TOKEN_LENGTH} characters`);
  if (!TOKEN_SYNTAX.test(secret)) {
    throw new TokenFileError(`${where}: the token has characters outside RFC 6750's token syntax (A-Z a-z 0-9 - . _ ~ + / and = at the end)`);
  }
  return { digest: sha256(secret), caller: `token:${position}`, scopes };
}

/** The file's tokens; throws TokenFileError naming AUTH_TOKENS_FILE and the line at fault. */
export function readTokenFile(file: string, firstPosition: number, known: readonly Scope[], all: ReadonlySet<Scope>): Line[] {
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

/** AUTH_TOKENS (plain text, every scope) followed by the lines of AUTH_TOKENS_FILE, if set. */
export function loadStaticTokens(
  source: { authTokens: readonly string[]; authTokensFile: string | undefined },
  scopes: readonly Scope[],
  leaseOf: LeaseOf,
): StaticTokenSet {
  const all: ReadonlySet<Scope> = new Set(scopes);
  const fromEnv = source.authTokens.map((token, index): Line => ({ digest: sha256(token), caller: `token:${index + 1}`, scopes: all }));
  const fromFile = source.authTokensFile === undefined ? [] : readTokenFile(source.authTokensFile, fromEnv.length + 1, scopes, all);
  return new StaticTokenSet([...fromEnv, ...fromFile].map((line) => entry(line, leaseOf)));
}
