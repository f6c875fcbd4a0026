import { aNewPlant } from '../helpers/plants';
import { appForAll } from '../helpers/fixtures';
import { tokenFileForAll } from '../helpers/token-file';
import { storedPlant, type TestApp } from '../helpers/test-app';
import { perProcess } from '../helpers/test-workers';

const ALICE = 'alice-token-0123456789abcdefghijklmnopqrstuvwxyz';
const ALICE_TOO = 'alice-too-token-0123456789abcdefghijklmnopqrstuvwxyz';
const BOB = 'bob-token-0123456789abcdefghijklmnopqrstuvwxyz';
const ADMIN = 'admin-token-0123456789abcdefghijklmnopqrstuvwxyz';
const json = { 'Content-Type': 'application/json' };

const tokens = tokenFileForAll({
  [ALICE]: 'tenant=alice',
  [ALICE_TOO]: 'tenant=alice',
  [BOB]: 'tenant=bob',
  [ADMIN]: 'plants:read plants:write plants:admin tenant=ops',
});
const env = { AUTH_TOKENS: '', AUTH_TOKENS_FILE: tokens, TENANT_CLAIM: 'sub' };

const get = (target: TestApp, token: string, headers: Record<string, string> = {}) => target.request.get('/plants').set({ Authorization: `Bearer ${token}`, ...headers });

/** The remaining count of each policy in the RateLimit header (draft-8): the per-caller one and "tenant". */
function remaining(response: { headers: Record<string, string> }): Record<string, number> {
  const header = response.headers.ratelimit ?? '';
  return Object.fromEntries([...header.matchAll(/"([^"]+)"; r=(\d+)/g)].map(([, name = '', count = '']) => [name === 'tenant' ? 'tenant' : 'caller', Number(count)]));
}

describe('RATE_LIMIT_PER_TENANT_PER_MINUTE', () => {
  const app = appForAll({ ...env, RATE_LIMIT_PER_TENANT_PER_MINUTE: '3' });

  it('when a tenant\'s callers together pass the limit, then the next gets 429 42902 with Retry-After, and another tenant is served', async () => {
    const first = [(await get(app, ALICE)).status, (await get(app, ALICE_TOO)).status, (await get(app, ALICE)).status];

    const limited = await get(app, ALICE_TOO);
    const other = await get(app, BOB);
    const actingInAlice = await get(app, ADMIN, { 'Act-As-Tenant': 'alice' });

    expect(first).toEqual([200, 200, 200]);
    expect({ status: limited.status, body: limited.body, retryAfter: Number(limited.headers['retry-after']) > 0 }).toEqual({
      status: 429,
      body: { error: 42902, message: 'Too many requests from this tenant, all its callers together; retry after the number of seconds in Retry-After.' },
      retryAfter: true,
    });
    expect([other.status, actingInAlice.status, actingInAlice.body.error]).toEqual([200, 429, 42902]);
  });
});

describe('both limits', () => {
  const app = appForAll({ ...env, RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_PER_TENANT_PER_MINUTE: '10' });

  perProcess('RateLimit headers are exact while a key stays on one worker; across workers they count the others\' unused credits as used (docs/decisions/workers.md, D6)').it('when a batch of three writes is sent, then it counts three in the caller\'s limit and three in the tenant\'s', async () => {
    const before = await get(app, BOB);
    const batch = await app.request
      .post('/plants/batch')
      .set({ ...json, Authorization: `Bearer ${BOB}` })
      .send(JSON.stringify({ operations: [aNewPlant(), aNewPlant(), aNewPlant()].map((plant) => ({ op: 'create', plant })) }));

    const after = await get(app, BOB);

    expect(batch.status).toBe(200);
    expect({ before: remaining(before), after: remaining(after) }).toEqual({ before: { caller: 99, tenant: 9 }, after: { caller: 95, tenant: 5 } });
  });

  it('when a batch passes the tenant\'s limit, then it answers 429 42902 naming RATE_LIMIT_PER_TENANT_PER_MINUTE and writes nothing', async () => {
    const plants = Array.from({ length: 11 }, () => aNewPlant());

    const response = await app.request
      .post('/plants/batch')
      .set({ ...json, Authorization: `Bearer ${ALICE}` })
      .send(JSON.stringify({ operations: plants.map((plant) => ({ op: 'create', plant })) }));

    expect({ status: response.status, error: response.body.error }).toEqual({ status: 429, error: 42902 });
    expect(response.body.message).toMatch(/^This batch counts as 11 requests, more than RATE_LIMIT_PER_TENANT_PER_MINUTE leaves this minute; nothing was written\. Retry after \d+ seconds, or send fewer operations\.$/);
    expect(plants.filter((plant) => storedPlant(app, plant.id as number) !== undefined)).toEqual([]);
  });
});
