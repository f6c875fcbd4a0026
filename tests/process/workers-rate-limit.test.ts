import http from 'node:http';
import { describeWith } from '../helpers/optional-services';
import { aNewPlant } from '../helpers/plants';
import type { RawResponse } from '../helpers/raw-request';
import type { ServerProcess } from '../helpers/server-process';
import { tokenFileForAll } from '../helpers/token-file';
import { JSON_HEADERS, onNewConnection, waitForLines, workersForEach } from '../helpers/workers';

const ALICE = 'alice-token-0123456789abcdefghijklmnopqrstuvwxyz';
const ALICE_TOO = 'alice-too-token-0123456789abcdefghijklmnopqrstuvwxyz';
const BOB = 'bob-token-0123456789abcdefghijklmnopqrstuvwxyz';

const list = (server: ServerProcess, token?: string): Promise<RawResponse> =>
  onNewConnection(server.url, { method: 'GET', headers: token === undefined ? JSON_HEADERS : { Authorization: `Bearer ${token}` } });
/** The workers that logged a request line, once all `count` lines are in (the request log is written in batches). */
async function servedBy(server: ServerProcess, count: number): Promise<Set<unknown>> {
  const request = (line: Record<string, unknown>) => line.msg === 'request';
  await waitForLines(server, request, count);
  return new Set(server.lines.filter(request).map((line) => line.worker));
}
const remainingOf = (response: RawResponse) => /r=(\d+)/.exec(String(response.headers.ratelimit))?.[1];

/** GET /plants `count` times one after another on one keep-alive connection (so one worker answers them all). */
async function onOneConnection(url: string, count: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const statuses: number[] = [];
  try {
    for (let n = 0; n < count; n += 1) {
      statuses.push(
        await new Promise<number>((resolve, reject) => {
          const request = http.get(`${url}/plants`, { agent, headers: JSON_HEADERS }, (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          });
          request.on('error', reject);
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return statuses;
}

describeWith('postgres', 'rate limits across WORKERS=3 without Redis (credits from the supervisor)', (server) => {
  const workers = workersForEach(server);
  const tokens = tokenFileForAll({ [ALICE]: 'tenant=alice', [ALICE_TOO]: 'tenant=alice', [BOB]: 'tenant=bob' });

  it('when 11 requests come one after another on new connections, then 10 are answered, the 11th is 429 with the usual body, and the headers count down exactly', async () => {
    const service = await workers.start({ WORKERS: '3', RATE_LIMIT_PER_MINUTE: '10' });

    const responses: RawResponse[] = [];
    for (let i = 0; i < 11; i += 1) responses.push(await list(service));

    expect(responses.map((response) => response.status)).toEqual([...Array(10).fill(200), 429]);
    expect(responses.map(remainingOf)).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0', '0']);
    expect(responses[10]?.body).toEqual({ error: 42901, message: 'Too many requests; retry after the number of seconds in Retry-After.' });
    expect(Number(responses[10]?.headers['retry-after'])).toBeGreaterThan(0);
    expect(await servedBy(service, 11)).toEqual(new Set([1, 2, 3]));
  });

  it('when 30 requests come at once on new connections, then exactly 10 are answered machine-wide and 20 are 429', async () => {
    const service = await workers.start({ WORKERS: '3', RATE_LIMIT_PER_MINUTE: '10' });

    const responses = await Promise.all(Array.from({ length: 30 }, () => list(service)));
    const statuses = responses.map((response) => response.status);

    expect([statuses.filter((status) => status === 200).length, statuses.filter((status) => status === 429).length]).toEqual([10, 20]);
    expect(await servedBy(service, 30)).toEqual(new Set([1, 2, 3]));
  });

  it('when a worker that answered once holds unused credits and the rest go to another worker, then the supervisor takes them back: 40 of a limit of 40 are answered', async () => {
    const service = await workers.start({ WORKERS: '2', RATE_LIMIT_PER_MINUTE: '40' });

    const first = await list(service);
    const rest = await onOneConnection(service.url, 41);

    expect([first.status, rest.filter((status) => status === 200).length, rest.slice(-2)]).toEqual([200, 39, [429, 429]]);
    expect(await servedBy(service, 42)).toEqual(new Set([1, 2]));
  });

  it('when batches on different workers count as their operations, then the machine-wide limit is reached by operations: 5 + 5 answered, 1 more is 429', async () => {
    const service = await workers.start({ WORKERS: '2', RATE_LIMIT_PER_MINUTE: '10' });
    const batch = (count: number) => onNewConnection(service.url, { path: '/plants/batch', headers: JSON_HEADERS, body: JSON.stringify({ operations: Array.from({ length: count }, () => ({ op: 'create', plant: aNewPlant() })) }) });

    const statuses = [(await batch(5)).status, (await batch(5)).status];
    const over = await batch(1);

    expect([...statuses, over.status, (over.body as { error: number }).error]).toEqual([200, 200, 429, 42901]);
    expect(await servedBy(service, 3)).toEqual(new Set([1, 2]));
  });

  it('when a tenant\'s two callers spread over the workers, then they count against one tenant limit, and another tenant has its own', async () => {
    const service = await workers.start({ WORKERS: '3', AUTH_TOKENS: '', AUTH_TOKENS_FILE: tokens, TENANT_CLAIM: 'sub', RATE_LIMIT_PER_TENANT_PER_MINUTE: '4' });
    const status = async (token: string) => {
      const response = await list(service, token);
      return response.status === 429 ? `429 ${(response.body as { error: number }).error}` : String(response.status);
    };

    const alice: string[] = [];
    for (const token of [ALICE, ALICE_TOO, ALICE, ALICE_TOO, ALICE, ALICE_TOO]) alice.push(await status(token));
    const bob = [await status(BOB), await status(BOB)];

    expect({ alice, bob }).toEqual({ alice: ['200', '200', '200', '200', '429 42902', '429 42902'], bob: ['200', '200'] });
  });
});
