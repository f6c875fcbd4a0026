import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StaticTokenStore } from '../../src/auth';
import { accessOf, RESOURCES } from '../../src/resources';
import { errorOf as messageOf } from '../helpers/common';

const ROOT = path.resolve(__dirname, '..', '..');
const ALICE = 'a'.repeat(40);
const BOB = 'b'.repeat(40);
const ADMIN = 'c'.repeat(40);
const SCOPES = accessOf(RESOURCES).scopes;
const TENANTS = { claim: 'sub', defaultName: 'alice', perTenantPerMinute: 0 };
const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

function tokensFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'plants-tokens-')), 'tokens');
  writeFileSync(file, text);
  return file;
}

const storeOf = (text: string) => new StaticTokenStore({ authTokens: [], authTokensFile: tokensFile(text), tokenSource: 'AUTH_TOKENS_FILE', tenants: TENANTS }, SCOPES);

const matchOf = (store: StaticTokenStore, token: string) => {
  const found = store.current().match(token);
  return found === undefined ? undefined : { scopes: [...found.scopes].sort(), tenant: found.tenant };
};

describe('AUTH_TOKENS_FILE lines with tenants', () => {
  it('when lines name tenants, then each token acts in its tenant, TENANT_DEFAULT\'s name as the shared key', () => {
    const store = storeOf(`sha256:${sha256(ALICE)} tenant=alice\n${BOB} plants:read tenant=Bob%20%26%20Co%2F%C3%BC\nsha256:${sha256(ADMIN)} tenant=ops plants:read plants:admin\n`);

    expect({ alice: matchOf(store, ALICE), bob: matchOf(store, BOB), admin: matchOf(store, ADMIN) }).toEqual({
      alice: { scopes: ['plants:read', 'plants:write'], tenant: '' },
      bob: { scopes: ['plants:read'], tenant: 'Bob & Co/ü' },
      admin: { scopes: ['plants:admin', 'plants:read'], tenant: 'ops' },
    });
  });

  it('when tenants are off, then tenant= is ignored and a line without scopes never grants plants:admin', () => {
    const file = tokensFile(`${ALICE} tenant=alice\n${BOB}\n`);
    const store = new StaticTokenStore({ authTokens: ['e'.repeat(32)], authTokensFile: file, tokenSource: 'AUTH_TOKENS_FILE', tenants: undefined }, SCOPES);

    expect([matchOf(store, ALICE), matchOf(store, BOB), matchOf(store, 'e'.repeat(32))]).toEqual([
      { scopes: ['plants:read', 'plants:write'], tenant: undefined },
      { scopes: ['plants:read', 'plants:write'], tenant: undefined },
      { scopes: ['plants:read', 'plants:write'], tenant: undefined },
    ]);
  });

  it.each([
    [`${ALICE} tenant=alice\n# admin\n\n${BOB} plants:read\n`, 'AUTH_TOKENS_FILE line 4: names no tenant; add tenant=<name>'],
    [`${ALICE} tenant=`, 'AUTH_TOKENS_FILE line 1: tenant= must be followed by the tenant\'s name percent-encoded as UTF-8 (1 to 255 characters, a space as %20)'],
    [`${ALICE} tenant=%zz`, 'AUTH_TOKENS_FILE line 1: tenant= must be followed by the tenant\'s name percent-encoded as UTF-8 (1 to 255 characters, a space as %20)'],
    [`${ALICE} tenant=%C3`, 'AUTH_TOKENS_FILE line 1: tenant= must be followed by the tenant\'s name percent-encoded as UTF-8 (1 to 255 characters, a space as %20)'],
    [`${ALICE} tenant=${'x'.repeat(256)}`, 'AUTH_TOKENS_FILE line 1: tenant= must be followed by the tenant\'s name percent-encoded as UTF-8 (1 to 255 characters, a space as %20)'],
    [`${ALICE} tenant=a tenant=b`, 'AUTH_TOKENS_FILE line 1: names tenant= more than once'],
  ])('when the file is %p, then loading refuses with %p', (text, message) => {
    expect(messageOf(() => storeOf(text))).toBe(message);
  });

  it('when a name is 255 characters once decoded, then it is accepted', () => {
    const store = storeOf(`${ALICE} tenant=${'%C3%BC'.repeat(255)}\n`);

    expect(matchOf(store, ALICE)?.tenant).toBe('ü'.repeat(255));
  });

  it('when AUTH_TOKENS or the generated token come with tenants on, then the start is refused naming what to do', () => {
    const file = tokensFile(`${ALICE} tenant=alice\n`);

    expect(messageOf(() => new StaticTokenStore({ authTokens: ['e'.repeat(32)], authTokensFile: file, tokenSource: 'AUTH_TOKENS_FILE', tenants: TENANTS }, SCOPES))).toBe(
      'AUTH_TOKENS: a token there cannot name a tenant, and TENANT_CLAIM is set; put each in AUTH_TOKENS_FILE with tenant=<name> (npm run token -- tenant=<name>)',
    );
    expect(messageOf(() => new StaticTokenStore({ authTokens: ['g'.repeat(43)], authTokensFile: undefined, tokenSource: 'generated', tenants: TENANTS }, SCOPES))).toBe(
      'TENANT_CLAIM: the generated development token names no tenant; set AUTH_TOKENS_FILE with tenant=<name> on each line (npm run token -- tenant=<name>), or AUTH_JWKS_URL',
    );
  });

  it('when a reload brings a line without a tenant, then it throws and the previous set stays', () => {
    const file = tokensFile(`${ALICE} tenant=alice\n`);
    const store = new StaticTokenStore({ authTokens: [], authTokensFile: file, tokenSource: 'AUTH_TOKENS_FILE', tenants: TENANTS }, SCOPES);
    writeFileSync(file, `${ALICE} tenant=alice\n${BOB}\n`);

    expect(() => store.reload()).toThrow('AUTH_TOKENS_FILE line 2: names no tenant; add tenant=<name>');
    expect(matchOf(store, ALICE)?.tenant).toBe('');
  });

  it('when a reload moves a token to another tenant, then a stream opened with it lapses as revoked; one that stays keeps going', async () => {
    const file = tokensFile(`${ALICE} tenant=alice\n${BOB} tenant=bob\n`);
    const store = new StaticTokenStore({ authTokens: [], authTokensFile: file, tokenSource: 'AUTH_TOKENS_FILE', tenants: TENANTS }, SCOPES);
    const lapsed: string[] = [];
    store.current().match(ALICE)?.lease.watch('plants:read', (reason) => lapsed.push(`alice ${reason}`));
    store.current().match(BOB)?.lease.watch('plants:read', (reason) => lapsed.push(`bob ${reason}`));
    writeFileSync(file, `${ALICE} tenant=carol\n${BOB} tenant=bob\n`);

    store.reload();
    await Promise.resolve();

    expect(lapsed).toEqual(['alice revoked']);
  });
});

describe('npm run token with a tenant', () => {
  it('when asked for a tenant with a space and a non-ASCII letter, then the printed line loads with that tenant and those scopes', () => {
    const output = execFileSync('npm', ['run', '-s', 'token', '--', 'plants:read', 'tenant=Acme Corp ü'], { cwd: ROOT, encoding: 'utf8' });
    const [, token = '', line = ''] = /^Token[^\n]*\n {2}(\S+)\nLine for AUTH_TOKENS_FILE[^\n]*\n {2}([^\n]+)\n$/.exec(output) ?? [];

    expect(line).toMatch(/^sha256:[0-9a-f]{64} plants:read tenant=Acme%20Corp%20%C3%BC$/);
    expect(matchOf(storeOf(`${line}\n`), token)).toEqual({ scopes: ['plants:read'], tenant: 'Acme Corp ü' });
  }, 30_000);
});
