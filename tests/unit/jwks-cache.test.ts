import { decodeProtectedHeader } from 'jose';
import { JwksCache } from '../../src/auth/jwks-cache';
import { ALGORITHMS } from '../../src/auth/jwt-verifier';
import { createLogger } from '../../src/logger';
import { loadConfig } from '../../src/config';
import { startIdentityProvider, type IdentityProvider } from '../helpers/identity-provider';

// The cache's version is what the verifier's remembered tokens are checked against: it must move when a key
// is withdrawn, and only then, or every fetch costs every client a signature check.
describe('the JWKS cache version', () => {
  let idp: IdentityProvider;
  let cache: JwksCache;
  let clock = 0;
  beforeEach(async () => {
    idp = await startIdentityProvider();
    const logger = createLogger(loadConfig({ LOG_LEVEL: 'silent', AUTH_TOKENS: 'x'.repeat(32) }), { write: () => undefined });
    clock = 0;
    cache = new JwksCache({ url: idp.jwksUrl, cooldownMs: 1000, maxAgeMs: 60_000, timeoutMs: 2000, algorithms: ALGORITHMS, logger, now: () => clock });
  });
  afterEach(async () => {
    await idp.stop();
  });

  const lookUp = async (token: string) => {
    const [header, payload, signature] = token.split('.');
    return cache.getKey(decodeProtectedHeader(token), { protected: header ?? '', payload: payload ?? '', signature: signature ?? '' }).then(
      () => 'found',
      (error: { code?: string }) => error.code,
    );
  };

  it('when a refetch returns the same keys, or adds one, then the version stays; when it withdraws one, then it goes up', async () => {
    await lookUp(await idp.mint());
    const first = cache.version;
    await idp.addKey('extra', 'ES256');
    const unknown = await idp.mint({}, { kid: 'extra' });
    clock += 1000;
    await lookUp(unknown);
    const sameKeys = cache.version;
    idp.publish('ES256', 'RS256', 'PS256', 'EdDSA', 'extra');
    clock += 1000;
    const added = await lookUp(unknown);
    const afterAdding = cache.version;
    idp.publish('extra');
    clock += 1000;
    await lookUp(await idp.mint({}, { kid: 'not-published', signWith: 'ES256' }));
    const afterWithdrawing = cache.version;

    expect({ fetches: idp.fetches(), first, sameKeys, added, afterAdding, afterWithdrawing }).toEqual({
      fetches: 4,
      first: 0,
      sameKeys: 0,
      added: 'found',
      afterAdding: 0,
      afterWithdrawing: 1,
    });
  });
});
