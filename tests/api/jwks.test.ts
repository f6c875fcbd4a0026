import { aNewPlant } from '../helpers/plants';
import { AUDIENCE, ISSUER } from '../helpers/identity-provider';
import { type TestApp } from '../helpers/test-app';
import { sleep } from '../helpers/common';
import { appForAll, appForEach, identityProviderForAll, identityProviderForEach } from '../helpers/fixtures';
import { freePort } from '../helpers/ports';
import { expectOnePerProcess, perProcess } from '../helpers/test-workers';

// Each process fetches and keeps its own key set: above one worker each worker fetches on its first JWT.
const ownCache = perProcess('the JWKS cache is each process\'s own: each worker fetches once and keeps its last good keys');

const UNKNOWN_KEY = { error: 40102, message: 'The access token is signed with a key the identity provider does not publish (unknown kid).' };
const UNREACHABLE = {
  error: 50310,
  message: 'The identity provider\'s signing keys cannot be fetched now, so no access token can be checked; retry later.',
};
// A cool-down long enough that two requests in a row fall inside it on a loaded machine, short enough to wait out.
const COOLDOWN_MS = 2000;

function post(app: TestApp, token: string) {
  return app.request
    .post('/plants')
    .set({ 'Content-Type': 'application/json', Authorization: `Bearer ${token}` })
    .send(JSON.stringify(aNewPlant()));
}


ownCache.describe('the JWKS cache', () => {
  const idp = identityProviderForEach();
  const app = appForEach(() => ({ ...idp.env(), AUTH_JWKS_COOLDOWN_S: String(COOLDOWN_MS / 1000), AUTH_CLOCK_TOLERANCE_S: '0' }));

  it('when a token names a kid the JWKS lacks, then it refetches at most once per cool-down and accepts the key once published', async () => {
    const first = await post(app, await idp.mint());
    await idp.addKey('rotated', 'RS256');
    const rotated = await idp.mint({}, { alg: 'RS256', kid: 'rotated' });
    await sleep(COOLDOWN_MS + 100);

    const unknown = await post(app, rotated);
    const fetchesAfterUnknown = idp.fetches();
    const again = await post(app, rotated);
    const fetchesWithinCooldown = idp.fetches();
    idp.publish('ES256', 'rotated');
    await sleep(COOLDOWN_MS + 100);
    const published = await post(app, rotated);

    expect({
      first: first.status,
      unknown: [unknown.status, unknown.body],
      fetchesAfterUnknown,
      again: [again.status, again.body],
      fetchesWithinCooldown,
      published: published.status,
      fetches: idp.fetches(),
    }).toEqual({
      first: 200,
      unknown: [401, UNKNOWN_KEY],
      fetchesAfterUnknown: 2,
      again: [401, UNKNOWN_KEY],
      fetchesWithinCooldown: 2,
      published: 200,
      fetches: 3,
    });
  });

  it('when many tokens with forged kids arrive at once, then the JWKS is fetched once', async () => {
    await post(app, await idp.mint());
    await sleep(COOLDOWN_MS + 100);
    await idp.addKey('forged', 'ES256');
    const forged = await idp.mint({}, { kid: 'forged' });

    const responses = await Promise.all(Array.from({ length: 20 }, () => post(app, forged)));

    expect({ statuses: [...new Set(responses.map((response) => response.status))], fetches: idp.fetches() }).toEqual({ statuses: [401], fetches: 2 });
  });

  it('when the provider goes down after the keys were fetched, then tokens keep verifying with the last good keys', async () => {
    const before = await post(app, await idp.mint());
    const later = await idp.mint({ sub: 'user-2' });
    await idp.addKey('never-seen', 'ES256');
    const unknownKid = await idp.mint({}, { kid: 'never-seen' });
    await idp.stop();
    await sleep(COOLDOWN_MS + 100);

    const unknown = await post(app, unknownKid);
    const after = await post(app, later);

    expect({ before: before.status, unknown: [unknown.status, unknown.body], after: after.status }).toEqual({
      before: 200,
      unknown: [401, UNKNOWN_KEY],
      after: 200,
    });
    expect(app.logs.filter((line) => line.msg === 'JWKS fetch failed; keeping the last good keys')).toHaveLength(1);
  });
});

describe('tokens verified before', () => {
  const idp = identityProviderForEach();
  const app = appForEach(() => ({ ...idp.env(), AUTH_JWKS_COOLDOWN_S: String(COOLDOWN_MS / 1000), AUTH_CLOCK_TOLERANCE_S: '0' }));

  it('when an accepted token reaches its exp, then the same token is refused as expired', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await idp.mint({ exp });
    const before = await post(app, token);
    await sleep(exp * 1000 - Date.now() + 200);

    const after = await post(app, token);

    expect({ before: before.status, after: [after.status, after.body.error] }).toEqual({ before: 200, after: [401, 40103] });
  });

  ownCache.it('when the provider withdraws a key, then a token it signed, accepted before, is refused once the new key set is fetched', async () => {
    const token = await idp.mint({}, { alg: 'ES256' });
    const before = await post(app, token);
    await idp.addKey('new-key', 'EdDSA');
    idp.publish('new-key');
    await sleep(COOLDOWN_MS + 100);
    const withNewKey = await post(app, await idp.mint({}, { alg: 'EdDSA', kid: 'new-key' }));

    const after = await post(app, token);

    expect({ before: before.status, withNewKey: withNewKey.status, after: [after.status, after.body], fetches: idp.fetches() }).toEqual({
      before: 200,
      withNewKey: 200,
      after: [401, UNKNOWN_KEY],
      fetches: 2,
    });
  });
});

describe('a provider never reached', () => {
  const idp = identityProviderForAll();
  let port = 0;
  beforeAll(async () => {
    // A port that was free a moment ago and that nobody listens on: connections are refused.
    port = await freePort();
  });
  const app = appForAll(() => ({ AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks`, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE }));

  it('when a JWT arrives and the keys were never fetched, then it answers 503 at once, and the service stays up', async () => {
    const started = performance.now();
    const first = await post(app, await idp.mint());
    const second = await post(app, await idp.mint());
    const elapsedMs = performance.now() - started;
    const health = await app.request.get('/healthz');

    expect({ first: [first.status, first.body], second: [second.status, second.body], health: health.status }).toEqual({
      first: [503, UNREACHABLE],
      second: [503, UNREACHABLE],
      health: 200,
    });
    // Far below the 5 s fetch timeout: a refused connection fails fast and the second waits on nothing.
    expect(elapsedMs).toBeLessThan(2000);
    expectOnePerProcess(app.logs.filter((line) => line.msg === 'JWKS fetch failed; no keys yet, JWTs are refused until it succeeds'));
  });
});
