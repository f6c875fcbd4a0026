import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StaticTokenStore } from '../../src/auth';
import { accessOf, RESOURCES } from '../../src/resources';
import { errorOf as messageOf } from '../helpers/common';

const PLAIN = 'p'.repeat(32);
const HASHED = 'h'.repeat(40);
const READ_ONLY = 'r'.repeat(36);
// The scopes the service runs with: the registered resources'.
const SCOPES = accessOf(RESOURCES).scopes;
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

function tokensFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'plants-tokens-')), 'tokens');
  writeFileSync(file, text);
  return file;
}

const errorOf = (text: string): string => messageOf(() => new StaticTokenStore({ authTokens: [], authTokensFile: tokensFile(text) }, SCOPES));

const matchOf = (store: StaticTokenStore, token: string) => {
  const found = store.current().match(token);
  return found === undefined ? undefined : { caller: found.caller, scopes: [...found.scopes].sort() };
};

describe('AUTH_TOKENS_FILE lines', () => {
  it('when lines hold plain tokens, digests, scopes, comments and blanks, then each token matches with its scopes', () => {
    const file = tokensFile(`# front end\r\n${PLAIN}\r\n\r\nsha256:${sha256(HASHED).toUpperCase()}\n  sha256:${sha256(READ_ONLY)}   plants:read  \n`);

    const store = new StaticTokenStore({ authTokens: ['e'.repeat(32)], authTokensFile: file }, SCOPES);

    expect({
      plain: matchOf(store, PLAIN),
      hashed: matchOf(store, HASHED),
      readOnly: matchOf(store, READ_ONLY),
      digestItself: matchOf(store, `sha256:${sha256(HASHED)}`),
      fromEnv: matchOf(store, 'e'.repeat(32)),
    }).toEqual({
      plain: { caller: 'token:2', scopes: ['plants:read', 'plants:write'] },
      hashed: { caller: `sha256:${sha256(HASHED).slice(0, 8)}`, scopes: ['plants:read', 'plants:write'] },
      readOnly: { caller: `sha256:${sha256(READ_ONLY).slice(0, 8)}`, scopes: ['plants:read'] },
      digestItself: undefined,
      fromEnv: { caller: 'token:1', scopes: ['plants:read', 'plants:write'] },
    });
  });

  it.each([
    [`${PLAIN} plants:delete`, 'AUTH_TOKENS_FILE line 1: unknown scope "plants:delete"; the scopes are plants:read and plants:write and plants:admin'],
    [`# one\nsha256:abc`, 'AUTH_TOKENS_FILE line 2: sha256: must be followed by 64 hex digits'],
    [`sha256:${'g'.repeat(64)}`, 'AUTH_TOKENS_FILE line 1: sha256: must be followed by 64 hex digits'],
    ['short-token', 'AUTH_TOKENS_FILE line 1: the token is shorter than 32 characters'],
  ])('when a line is %p, then loading refuses with %p', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('when the file holds no token or cannot be read, then loading refuses and names AUTH_TOKENS_FILE', () => {
    const empty = tokensFile('# nothing\n\n');

    expect(errorOf('# nothing\n\n')).toMatch(/^AUTH_TOKENS_FILE: .* holds no token$/);
    expect(() => new StaticTokenStore({ authTokens: [], authTokensFile: `${empty}.missing` }, SCOPES)).toThrow(/^AUTH_TOKENS_FILE: cannot read .*missing \(ENOENT\)$/);
  });

  it('when a plain line has characters outside RFC 6750 token syntax, then loading refuses and names the line', () => {
    expect(errorOf(`${PLAIN}\n${'q'.repeat(31)}"\n`)).toBe(
      "AUTH_TOKENS_FILE line 2: the token has characters outside RFC 6750's token syntax (A-Z a-z 0-9 - . _ ~ + / and = at the end)",
    );
  });

  it('when the file changes to one that does not parse, then reload throws and the previous set stays', () => {
    const file = tokensFile(`${PLAIN}\n`);
    const store = new StaticTokenStore({ authTokens: [], authTokensFile: file }, SCOPES);
    writeFileSync(file, `${PLAIN}\nshort\n`);

    expect(() => store.reload()).toThrow('AUTH_TOKENS_FILE line 2: the token is shorter than 32 characters');
    expect(matchOf(store, PLAIN)?.caller).toBe('token:1');
  });
});
