import { aNewPlant } from '../helpers/plants';
import { OTHER_TOKEN, TOKEN, storedRows } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

const app = appForAll();

const json = { 'Content-Type': 'application/json' };
const MISSING = { error: 40101, message: 'Send Authorization: Bearer <token>.' };
const INVALID = { error: 40102, message: 'The bearer token is not valid.' };
const MALFORMED = { error: 40102, message: 'The bearer token is not valid: it has characters RFC 6750 does not allow in a token.' };

describe('bearer authentication on POST /plants', () => {
  it.each([
    ['no Authorization header', {}],
    ['the Basic scheme', { Authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` }],
    ['the token without a scheme', { Authorization: TOKEN }],
    ['Bearer with no token', { Authorization: 'Bearer ' }],
  ])('when the request has %s, then it answers 401 with a Bearer challenge and no error attribute', async (_case, headers) => {
    const response = await app.request.post('/plants').set({ ...json, ...headers }).send(JSON.stringify(aNewPlant()));

    expect({ status: response.status, challenge: response.headers['www-authenticate'], body: response.body }).toEqual({
      status: 401,
      challenge: 'Bearer realm="plants"',
      body: MISSING,
    });
  });

  it.each([
    ['an unknown token', `Bearer ${'z'.repeat(40)}`, INVALID],
    ['a prefix of a real token', `Bearer ${TOKEN.slice(0, -1)}`, INVALID],
    ['a real token with a suffix', `Bearer ${TOKEN}x`, INVALID],
    ['a token with characters outside RFC 6750 syntax', 'Bearer tok\u00e9n"with,quotes', MALFORMED],
    ['a token with a space inside', `Bearer ${TOKEN.slice(0, 10)} ${TOKEN.slice(10)}`, MALFORMED],
  ])('when the request presents %s, then it answers 401 with error="invalid_token"', async (_case, authorization, body) => {
    const response = await app.request.post('/plants').set({ ...json, Authorization: authorization }).send(JSON.stringify(aNewPlant()));

    expect({ status: response.status, challenge: response.headers['www-authenticate'], body: response.body }).toEqual({
      status: 401,
      challenge: 'Bearer realm="plants", error="invalid_token"',
      body,
    });
  });

  it.each([
    ['Bearer', TOKEN],
    ['bearer', TOKEN],
    ['BEARER', OTHER_TOKEN],
  ])('when the scheme is written %s with an accepted token, then the plant is created', async (scheme, token) => {
    const plant = aNewPlant();

    const response = await app.request.post('/plants').set({ ...json, Authorization: `${scheme} ${token}` }).send(JSON.stringify(plant));

    expect(response.status).toBe(200);
    expect(storedRows(app).some((row) => row.id === BigInt(plant.id as number))).toBe(true);
  });

  it('when the token comes in the query string, then it is not accepted', async () => {
    const response = await app.request.post(`/plants?access_token=${TOKEN}`).set(json).send(JSON.stringify(aNewPlant()));

    expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: MISSING });
  });

  it('when an anonymous request has a malformed body, then it gets 401, not a parse error', async () => {
    const response = await app.request.post('/plants').set(json).send('{not json');

    expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: MISSING });
  });

  it('when requests carry tokens, then no log line contains a token or the Authorization header', async () => {
    await app.request.post('/plants').set({ ...json, Authorization: `Bearer ${TOKEN}` }).send(JSON.stringify(aNewPlant()));
    await app.request.post('/plants').set({ ...json, Authorization: 'Bearer wrong-token-wrong-token-wrong-token' }).send('{}');
    await app.request.post(`/plants?access_token=${TOKEN}`).set(json).send('{}');

    const text = app.rawLogs.join('');
    expect(app.rawLogs.length).toBeGreaterThanOrEqual(3);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('wrong-token');
    expect(text.toLowerCase()).not.toContain('authorization');
  });
});
