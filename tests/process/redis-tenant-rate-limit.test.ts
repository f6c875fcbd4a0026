import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { describeWith } from '../helpers/optional-services';
import { freePort } from '../helpers/ports';
import { rawRequest } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { tokenFileForAll } from '../helpers/token-file';

const ALICE = 'alice-token-0123456789abcdefghijklmnopqrstuvwxyz';
const ALICE_TOO = 'alice-too-token-0123456789abcdefghijklmnopqrstuvwxyz';
const BOB = 'bob-token-0123456789abcdefghijklmnopqrstuvwxyz';
const tokens = tokenFileForAll({ [ALICE]: 'tenant=alice', [ALICE_TOO]: 'tenant=alice', [BOB]: 'tenant=bob' });

const get = async (server: ServerProcess, token: string) => {
  const response = await rawRequest(server.url, { method: 'GET', headers: { Authorization: `Bearer ${token}` } });
  return response.status === 429 ? `429 ${(response.body as { error: number }).error}` : String(response.status);
};
const connected = (server: ServerProcess) => server.waitForLine((line) => line.msg === 'Redis connected; rate limiting counts there');

describeWith('redis', 'the per-tenant rate limit in Redis', (redisUrl) => {
  const servers: ServerProcess[] = [];

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('when two replicas share REDIS_URL, then a tenant\'s callers on both count against one limit, under the tenant: prefix', async () => {
    // A key prefix of this run's own: other runs on the same Redis count apart.
    const prefix = `plants-test:${randomBytes(6).toString('hex')}:`;
    const env = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, AUTH_TOKENS: '', AUTH_TOKENS_FILE: tokens, TENANT_CLAIM: 'sub', RATE_LIMIT_PER_TENANT_PER_MINUTE: '4' };
    const [a, b] = await Promise.all([startServer(env), startServer(env)]);
    servers.push(a, b);
    await Promise.all([connected(a), connected(b)]);

    const first = [await get(a, ALICE), await get(b, ALICE_TOO), await get(a, ALICE_TOO), await get(b, ALICE)];
    const limited = [await get(a, ALICE), await get(b, ALICE_TOO)];
    const other = [await get(a, BOB), await get(b, BOB)];
    const redis = createClient({ url: redisUrl });
    await redis.connect();
    const keys = (await redis.keys(`${prefix}*`)).sort();
    await redis.close();

    expect({ first, limited, other }).toEqual({ first: ['200', '200', '200', '200'], limited: ['429 42902', '429 42902'], other: ['200', '200'] });
    expect(keys).toEqual([`${prefix}tenant:alice`, `${prefix}tenant:bob`]);
  });

  it('when Redis cannot be reached, then the per-tenant limit lets requests through, like the per-caller one', async () => {
    const server = await startServer({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, AUTH_TOKENS: '', AUTH_TOKENS_FILE: tokens, TENANT_CLAIM: 'sub', RATE_LIMIT_PER_TENANT_PER_MINUTE: '1' });
    servers.push(server);
    await server.waitForLine((line) => line.msg === 'Redis cannot be reached; rate limiting is off until it answers');

    const statuses = [await get(server, ALICE), await get(server, ALICE_TOO), await get(server, ALICE)];

    expect(statuses).toEqual(['200', '200', '200']);
  });
});
