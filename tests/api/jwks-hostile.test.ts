import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { aNewPlant } from '../helpers/plants';
import { appForAll, appForEach, identityProviderForAll, identityProviderForEach, sleep } from '../helpers/fixtures';
import { claimsFor } from '../helpers/identity-provider';
import { type TestApp } from '../helpers/test-app';
import { expectOnePerProcess, perProcess } from '../helpers/test-workers';

// Each process fetches and keeps its own key set: above one worker each worker fetches on its first JWT.
const ownCache = perProcess('the JWKS cache is each process\'s own: each worker fetches once and keeps its last good keys');

const UNAVAILABLE = {
  error: 50310,
  message: 'The identity provider\'s signing keys cannot be fetched now, so no access token can be checked; retry later.',
};
const UNKNOWN_KEY = { error: 40102, message: 'The access token is signed with a key the identity provider does not publish (unknown kid).' };
const UNUSABLE_KEY = { error: 40102, message: 'The access token names a key (kid) the identity provider publishes but this service cannot verify with.' };
const TIMEOUT_MS = 1000;
const COOLDOWN_MS = 1000;

function post(app: TestApp, token: string) {
  return app.request
    .post('/plants')
    .set({ 'Content-Type': 'application/json', Authorization: `Bearer ${token}` })
    .send(JSON.stringify(aNewPlant()));
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A token anyone can write: a header naming a kid, valid claims, and a signature of four bytes of nothing. */
const anonymous = (kid: string) => `${b64({ alg: 'RS256', kid })}.${b64(claimsFor())}.AAAAAA`;

describe('a JWKS server that never finishes its answer', () => {
  const idp = identityProviderForEach();
  const app = appForEach(() => ({ ...idp.env(), AUTH_JWKS_TIMEOUT_MS: String(TIMEOUT_MS), AUTH_JWKS_COOLDOWN_S: String(COOLDOWN_MS / 1000) }));

  it('when it trickles a byte every 200 ms on first use, then every waiting JWT request gets 503 with Retry-After within the deadline', async () => {
    idp.answerWith('trickle');
    const token = await idp.mint();
    const started = performance.now();

    const responses = await Promise.all(Array.from({ length: 5 }, () => post(app, token)));
    const elapsedMs = performance.now() - started;

    expect(responses.map((response) => [response.status, response.headers['retry-after'], response.body as unknown])).toEqual(
      Array.from({ length: 5 }, () => [503, '1', UNAVAILABLE]),
    );
    // The deadline plus the time a loaded machine takes to answer five requests; the trickle alone never ends.
    expect(elapsedMs).toBeLessThan(TIMEOUT_MS + 1500);
    // One line per process whose requests waited on the fetch.
    const failures = app.logs.filter((line) => line.msg.startsWith('JWKS fetch failed'));
    expectOnePerProcess(failures);
    for (const failure of failures) expect(failure).toMatchObject({ level: 50, cause: `no complete answer within ${TIMEOUT_MS} ms` });
  });

  ownCache.it('when it trickles during a key rotation, then a token with the new kid gets 401 within the deadline and known keys keep working', async () => {
    const before = await post(app, await idp.mint());
    await idp.addKey('rotated', 'ES256');
    const rotated = await idp.mint({}, { kid: 'rotated' });
    idp.answerWith('trickle');
    await sleep(COOLDOWN_MS + 100);
    const started = performance.now();

    const [unknown, known] = await Promise.all([post(app, rotated), post(app, await idp.mint({ sub: 'user-2' }))]);
    const elapsedMs = performance.now() - started;

    expect({ before: before.status, unknown: [unknown.status, unknown.body], known: known.status }).toEqual({
      before: 200,
      unknown: [401, UNKNOWN_KEY],
      known: 200,
    });
    expect(elapsedMs).toBeLessThan(TIMEOUT_MS + 1500);
  });

  it('when it sends 32 MB, then it stops reading past 1 MiB and the JWT gets 503', async () => {
    idp.answerWith('huge');

    const response = await post(app, await idp.mint());

    expect([response.status, response.body]).toEqual([503, UNAVAILABLE]);
    expect(app.logs.filter((line) => line.msg.startsWith('JWKS fetch failed'))).toEqual([
      expect.objectContaining({ cause: 'the JWKS answer is larger than 1048576 bytes' }),
    ]);
    // What the provider managed to write before the service hung up: the limit plus socket buffers, not 32 MB.
    expect(idp.bytesSent()).toBeLessThan(12 * 1024 * 1024);
  });
});

describe('keys the service cannot verify with', () => {
  const idp = identityProviderForAll();
  const weak: JWK = { ...generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }), kid: 'weak', alg: 'RS256', use: 'sig' };
  const empty: JWK = { kty: 'RSA', n: 'AAAA', e: 'AQAB', kid: 'n-AAAA', use: 'sig' };
  beforeAll(() => {
    idp.publishRaw(weak, empty);
  });
  const app = appForAll(() => ({ ...idp.env(), AUTH_JWKS_COOLDOWN_S: String(COOLDOWN_MS / 1000) }));

  ownCache.it('when anonymous tokens name a 1024-bit key or a key with n "AAAA", then each gets 401 invalid_token and each key one warn line', async () => {
    const answers = [];
    for (const kid of ['weak', 'n-AAAA', 'weak', 'n-AAAA', 'weak']) {
      const response = await post(app, anonymous(kid));
      answers.push([response.status, response.headers['www-authenticate'], response.body]);
    }
    const good = await post(app, await idp.mint());

    expect(answers).toEqual(Array.from({ length: 5 }, () => [401, 'Bearer realm="plants", error="invalid_token"', UNUSABLE_KEY]));
    expect(good.status).toBe(200);
    expect(app.logs.filter((line) => line.level >= 40 && line.msg !== 'request')).toEqual([
      expect.objectContaining({ level: 40, kid: 'weak', problem: 'an RSA key of 1024 bits; 2048 at least', msg: 'JWKS key unusable; tokens naming its kid are refused' }),
      expect.objectContaining({ level: 40, kid: 'n-AAAA', problem: 'an RSA key of 0 bits; 2048 at least' }),
    ]);
    expect(idp.fetches()).toBe(1);
  });
});
