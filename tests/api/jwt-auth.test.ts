import Ajv2020 from 'ajv/dist/2020';
import { aNewPlant } from '../helpers/plants';
import { ALGS, hmacSigned } from '../helpers/identity-provider';
import { OTHER_TOKEN, storedRows, type TestApp } from '../helpers/test-app';
import { appForAll, identityProviderForAll } from '../helpers/fixtures';

const json = { 'Content-Type': 'application/json' };
const INVALID_CHALLENGE = 'Bearer realm="plants", error="invalid_token"';
const now = () => Math.floor(Date.now() / 1000);

const idp = identityProviderForAll();
const app = appForAll(() => idp.env());

function post(target: TestApp, token: string, plant = aNewPlant()) {
  return target.request.post('/plants').set({ ...json, Authorization: `Bearer ${token}` }).send(JSON.stringify(plant));
}

const outcome = (response: { status: number; headers: Record<string, string>; body: unknown }) => ({
  status: response.status,
  challenge: response.headers['www-authenticate'],
  body: response.body,
});

describe('JWT access tokens on POST /plants', () => {
  it.each(ALGS)('when a valid %s token with plants:write is sent, then the plant is created and the log names its sub', async (alg) => {
    const token = await idp.mint({ sub: `user-${alg}` }, { alg });
    const plant = aNewPlant();

    const response = await post(app, token, plant);

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { name: plant.name, tag: plant.tag } });
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(true);
    expect(app.logs.filter((line) => line.reqId === response.headers['x-request-id'])).toEqual([
      expect.objectContaining({ msg: 'request', status: 200, caller: `sub:user-${alg}` }),
    ]);
  });

  it('when the token carries its scopes as an scp array, then they count', async () => {
    const response = await post(app, await idp.mint({ scope: undefined, scp: ['plants:write'] }));

    expect(response.status).toBe(200);
  });

  it('when exp passed less than AUTH_CLOCK_TOLERANCE_S ago, then the token is still accepted', async () => {
    const response = await post(app, await idp.mint({ exp: now() - 10 }));

    expect(response.status).toBe(200);
  });

  it('when a static token and JWTs are both configured, then the static token still works', async () => {
    const response = await post(app, OTHER_TOKEN);

    expect(response.status).toBe(200);
  });

  it('when the token has expired, then it answers 401 with the expired code and says so', async () => {
    const response = await post(app, await idp.mint({ exp: now() - 120 }));

    expect(outcome(response)).toEqual({
      status: 401,
      challenge: INVALID_CHALLENGE,
      body: { error: 40103, message: 'The access token has expired; get a new one from the identity provider.' },
    });
  });

  it.each([
    ['is not valid yet', { nbf: now() + 120 }, 'The access token is not valid yet (its "nbf" is in the future).'],
    ['comes from another issuer', { iss: 'https://evil.example' }, 'The access token comes from another issuer; this service accepts tokens issued by https://id.test.example/realms/plants.'],
    ['is for another audience', { aud: 'another-api' }, 'The access token is meant for another audience; this service\'s audience is plant-store.'],
    ['has no exp', { exp: undefined }, 'The access token has no "exp" claim, which this service requires.'],
    ['has no sub', { sub: undefined }, 'The access token has no "sub" claim, which this service requires.'],
    ['has an empty sub', { sub: '' }, 'The access token\'s "sub" claim must be a non-empty string of at most 255 characters.'],
    ['has a number as sub', { sub: 42 }, 'The access token\'s "sub" claim must be a non-empty string of at most 255 characters.'],
    ['has an object as sub', { sub: { id: 'user-1' } }, 'The access token\'s "sub" claim must be a non-empty string of at most 255 characters.'],
    ['has a sub of 256 characters', { sub: 'u'.repeat(256) }, 'The access token\'s "sub" claim must be a non-empty string of at most 255 characters.'],
    ['was issued in the future', { iat: now() + 120 }, 'The access token\'s "iat" (issued at) is in the future; the issuer\'s clock is wrong or the token is not genuine.'],
    ['has nbf as a string', { nbf: String(now() - 60) }, 'The access token\'s "nbf" claim must be a number (seconds since 1970-01-01 UTC).'],
  ])('when the token %s, then it answers 401 invalid_token saying what was wrong', async (_case, claims, message) => {
    const response = await post(app, await idp.mint(claims));

    expect(outcome(response)).toEqual({ status: 401, challenge: INVALID_CHALLENGE, body: { error: 40102, message } });
  });

  it('when iat is ahead of the clock by less than the tolerance, then the token is accepted', async () => {
    const response = await post(app, await idp.mint({ iat: now() + 10 }));

    expect(response.status).toBe(200);
  });

  it('when the header marks an extension as critical, then it answers 401 naming crit, not the algorithm', async () => {
    const token = await idp.mint({}, { header: { crit: ['x-plants-ext'], 'x-plants-ext': 1 } });

    const response = await post(app, token);

    expect(outcome(response)).toEqual({
      status: 401,
      challenge: INVALID_CHALLENGE,
      body: { error: 40102, message: 'The access token\'s header marks "x-plants-ext" as critical ("crit"); this service supports no such extension.' },
    });
  });

  it('when the last character of the signature is changed to another that decodes to the same bytes, then that spelling is refused', async () => {
    const token = await idp.mint({ sub: 'malleable' });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // An ES256 signature is 64 bytes: 86 characters whose last carries 2 bits, so its low 4 bits are free.
    const last = alphabet.indexOf(token.slice(-1));
    const variant = `${token.slice(0, -1)}${alphabet[last ^ 1]}`;

    const original = await post(app, token);
    const changed = await post(app, variant);

    expect({ original: original.status, changed: outcome(changed) }).toEqual({
      original: 200,
      changed: {
        status: 401,
        challenge: INVALID_CHALLENGE,
        body: { error: 40102, message: 'The bearer token looks like a JWT but is not a well-formed one: each part must be base64url in its one canonical spelling.' },
      },
    });
  });

  it('when the signature was made by another key under a published kid, then it answers 401 bad signature', async () => {
    await idp.addKey('forger', 'ES256');

    const response = await post(app, await idp.mint({}, { alg: 'ES256', kid: 'ES256', signWith: 'forger' }));

    expect(outcome(response)).toEqual({
      status: 401,
      challenge: INVALID_CHALLENGE,
      body: { error: 40102, message: 'The access token\'s signature does not verify.' },
    });
  });

  it.each([
    ['alg none (unsigned)', () => Promise.resolve(idp.unsigned())],
    ['HS256 with the provider\'s public key as the secret', async () => hmacSigned(await idp.publicPem('RS256'))],
  ])('when the token uses %s, then it answers 401 naming the accepted algorithms', async (_case, make) => {
    const token = await make();

    const response = await post(app, token);

    expect(outcome(response)).toEqual({
      status: 401,
      challenge: INVALID_CHALLENGE,
      body: { error: 40102, message: 'The access token\'s signing algorithm is not accepted; this service accepts RS256, PS256, ES256, EdDSA.' },
    });
  });

  it('when a token is refused, then neither the answer nor any log line contains it or its signature', async () => {
    const token = await idp.mint({ aud: 'another-api' });
    const signature = token.split('.')[2] ?? '';

    const response = await post(app, token);

    expect(response.status).toBe(401);
    expect(JSON.stringify(response.body)).not.toContain(signature);
    expect(app.rawLogs.join('')).not.toContain(signature);
    expect(app.rawLogs.join('')).not.toContain(token.split('.')[1]);
  });
});

describe('scopes', () => {
  const insufficient = (scope: string, method: string) => ({
    status: 403,
    challenge: `Bearer realm="plants", error="insufficient_scope", scope="${scope}"`,
    body: { error: 40301, message: `This token lacks the ${scope} scope, which ${method} needs.` },
  });

  it('when a token with plants:read only creates a plant, then it answers 403 and nothing is stored', async () => {
    const plant = aNewPlant();

    const response = await post(app, await idp.mint({ scope: 'plants:read' }), plant);

    expect(outcome(response)).toEqual(insufficient('plants:write', 'POST'));
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(false);
  });

  it('when a token with plants:read only deletes a plant, then it answers 403 before routing', async () => {
    const response = await app.request.delete('/plants/123').set({ Authorization: `Bearer ${await idp.mint({ scope: 'plants:read' })}` });

    expect(outcome(response)).toEqual(insufficient('plants:write', 'DELETE'));
  });

  it('when a token with plants:write only reads the plants, then it answers 403 before routing', async () => {
    const response = await app.request.get('/plants').set({ Authorization: `Bearer ${await idp.mint({ scope: undefined, scp: ['plants:write'] })}` });

    expect(outcome(response)).toEqual(insufficient('plants:read', 'GET'));
  });

  it('when a token has no scope claim at all, then a create answers 403', async () => {
    const response = await post(app, await idp.mint({ scope: undefined }));

    expect(outcome(response)).toEqual(insufficient('plants:write', 'POST'));
  });

  it('when a token has scp as an array with plants:read only, then a create answers 403', async () => {
    const response = await post(app, await idp.mint({ scope: undefined, scp: ['plants:read'] }));

    expect(outcome(response)).toEqual(insufficient('plants:write', 'POST'));
  });
});

describe('rate limit with JWTs', () => {
  const limited = appForAll(() => ({ ...idp.env(), RATE_LIMIT_PER_MINUTE: '2' }));

  it('when one subject uses up its budget with fresh tokens, then it gets 429 while another subject still gets through', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await post(limited, await idp.mint({ sub: 'busy-user', jti: `t${i}` }))).status);
    const other = await post(limited, await idp.mint({ sub: 'quiet-user' }));

    expect({ statuses, other: other.status }).toEqual({ statuses: [200, 200, 429], other: 200 });
  });
});

describe('the OpenAPI document on JWTs and scopes', () => {
  it('when fetched, then it accepts JWT bearers, names the scope of POST /plants and documents the real 401 and 403', async () => {
    const document = (await app.request.get('/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema(document, 'openapi.json');
    const expired = await post(app, await idp.mint({ exp: now() - 120 }));
    const forbidden = await post(app, await idp.mint({ scope: 'plants:read' }));

    const valid = (status: number, body: unknown) => ajv.getSchema(`openapi.json#/paths/~1plants/post/responses/${status}/content/application~1json/schema`)?.(body);

    expect({
      scheme: document.components.securitySchemes.bearerAuth,
      security: document.paths['/plants'].post.security,
      expired: [expired.status, valid(401, expired.body)],
      forbidden: [forbidden.status, valid(403, forbidden.body)],
    }).toEqual({
      scheme: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      security: [{ bearerAuth: ['plants:write'] }],
      expired: [401, true],
      forbidden: [403, true],
    });
    expect(document.paths['/plants'].post.responses['403'].headers['WWW-Authenticate']).toBeDefined();
  });
});

describe('a static token shaped like a JWT while JWTs are accepted', () => {
  const DOTTED = 'static-part-one.static-part-two.static-part-three';
  const both = appForAll(() => ({ ...idp.env(), AUTH_TOKENS: DOTTED }));

  it('when it is presented, then it authenticates as the static token it is', async () => {
    const response = await post(both, DOTTED);

    expect(response.status).toBe(200);
    expect(both.logs.filter((line) => line.reqId === response.headers['x-request-id'])).toEqual([expect.objectContaining({ status: 200, caller: 'token:1' })]);
  });

  it('when a dotted token that is no static token is presented, then it is checked as a JWT and refused', async () => {
    const response = await post(both, 'static-part-one.static-part-two.static-part-four');

    expect(outcome(response)).toEqual({
      status: 401,
      challenge: INVALID_CHALLENGE,
      body: { error: 40102, message: 'The bearer token looks like a JWT but is not a well-formed one: each part must be base64url in its one canonical spelling.' },
    });
  });
});
