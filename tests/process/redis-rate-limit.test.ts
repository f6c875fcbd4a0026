import { randomBytes } from 'node:crypto';
import { aNewPlant } from '../helpers/plants';
import { describeWith } from '../helpers/optional-services';
import { rawRequest } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { TOKEN } from '../helpers/test-app';
import { testWorkers } from '../helpers/test-workers';

const json = { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` };
const post = async (server: ServerProcess) => (await rawRequest(server.url, { headers: json, body: JSON.stringify(aNewPlant()) })).status;
const outageLines = (server: ServerProcess) => server.lines.filter((line) => line.msg === 'Redis cannot be reached; rate limiting is off until it answers');
const BACK = 'Redis answers again; rate limiting is back on';
// Each worker has its own Redis connection and says each change of it once: wait for every worker's line.
const connected = (server: ServerProcess) =>
  server.waitForLine(() => server.lines.filter((line) => line.msg === 'Redis connected; rate limiting counts there').length === testWorkers());

describeWith('redis', 'the rate limit in Redis', (redisUrl) => {
  const servers: ServerProcess[] = [];
  // A key prefix of this run's own: other runs on the same Redis count apart.
  const prefix = () => `plants-test:${randomBytes(6).toString('hex')}:`;

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('when two replicas share REDIS_URL, then requests to both count against one limit', async () => {
    const env = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix(), RATE_LIMIT_PER_MINUTE: '4' };
    const [a, b] = await Promise.all([startServer(env), startServer(env)]);
    servers.push(a, b);
    await Promise.all([connected(a), connected(b)]);

    const first = [await post(a), await post(b), await post(a), await post(b)];
    const limited = [await post(a), await post(b)];

    expect({ first, limited }).toEqual({ first: [200, 200, 200, 200], limited: [429, 429] });
  });

  it('when Redis goes away, then requests go through unlimited with one log line per outage, and the limit returns with Redis', async () => {
    const target = new URL(redisUrl);
    const proxy: TcpProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    try {
      const server = await startServer({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_KEY_PREFIX: prefix(), RATE_LIMIT_PER_MINUTE: '3' });
      servers.push(server);
      await connected(server);
      const workers = testWorkers();
      const count = (msg: string) => server.lines.filter((line) => line.msg === msg).length;
      const before = [await post(server), await post(server), await post(server), await post(server)];

      await proxy.cut();
      const during: number[] = [];
      for (let i = 0; i < 8; i += 1) during.push(await post(server));
      await proxy.restore();
      await server.waitForLine(() => count(BACK) === workers, 15_000);
      const back = server.lines.find((line) => line.msg === BACK);
      const after = await post(server);
      await proxy.cut();
      await post(server);
      await server.waitForLine(() => outageLines(server).length === 2 * workers);

      expect({ before, during, back: back?.level, after }).toEqual({ before: [200, 200, 200, 429], during: Array(8).fill(200), back: 30, after: 429 });
      // One line per outage from each worker.
      expect(outageLines(server)).toHaveLength(2 * workers);
      expect(new Set(outageLines(server).map((line) => line.worker)).size).toBe(workers === 1 ? 1 : workers);
    } finally {
      await proxy.close();
    }
  });
});
