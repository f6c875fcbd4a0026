import { uniqueId } from '../helpers/plants';
import { nginxAvailable, startNginxReplicas } from '../helpers/nginx';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, plantRows, type TestDatabase } from '../helpers/postgres';
import { rawRequest } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { sleep } from '../helpers/common';

const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
const requestLines = (server: ServerProcess) => server.lines.filter((line) => line.msg === 'request').length;

// nginx is on every machine .ci/run prepares; behind-nginx.test.ts fails CI without it, this file needs PostgreSQL too.
const suite = (server: string) => {
  let database: TestDatabase;
  const running: ServerProcess[] = [];
  let proxy: { url: string; stop: () => Promise<void> };

  beforeAll(async () => {
    database = await createTestDatabase(server);
  });

  afterAll(async () => {
    await proxy.stop();
    await Promise.all(running.map((replica) => replica.stop()));
    await database.drop();
  });

  it('when one replica is stopped and started again under creates, then every create answers 200 and is stored', async () => {
    const env = { DATABASE_URL: database.url, TRUST_PROXY: '1' };
    const [a, b] = await Promise.all([startServer(env), startServer(env)]);
    running.push(a, b);
    const portA = new URL((a).url).port;
    proxy = await startNginxReplicas([Number(portA), Number(new URL((b).url).port)]);
    const answers: { id: number; status: number }[] = [];
    let phase = 'both';
    const worker = async () => {
      while (phase !== 'done') {
        const id = uniqueId();
        const response = await rawRequest(proxy.url, { headers, body: JSON.stringify({ id, name: `Replica fern ${id}` }) });
        answers.push({ id, status: response.status });
      }
    };
    const workers = Array.from({ length: 4 }, worker);

    await sleep(500);
    const stopped = await (a).stop();
    running.splice(running.indexOf(a), 1);
    phase = 'one';
    await sleep(700);
    const restarted = await startServer({ ...env, PORT: portA });
    running.push(restarted);
    phase = 'restarted';
    // nginx tries a failed upstream again after fail_timeout (5 s); then the restarted replica takes its share.
    const servedAfterRestart = await restarted.waitForLine((line) => line.msg === 'request', 15_000).then(
      () => true,
      () => false,
    );
    await sleep(300);
    phase = 'done';
    await Promise.all(workers);

    const stored = new Set(plantRows(database.url).map((row) => Number(row.id)));
    const ok = answers.filter((answer) => answer.status === 200);
    const retries = await Promise.all(
      ok.slice(0, 30).map(async ({ id }) => (await rawRequest(proxy.url, { headers, body: JSON.stringify({ id, name: `Replica fern ${id}` }) })).status),
    );
    expect(stopped.code).toBe(0);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(ok.length).toBeGreaterThan(20);
    expect(ok.filter(({ id }) => !stored.has(id))).toEqual([]);
    expect(retries).toEqual(Array(retries.length).fill(200));
    expect({ b: requestLines(b) > 0, restarted: servedAfterRestart }).toEqual({ b: true, restarted: true });
  });
};

const name = 'two replicas behind nginx with docker/nginx.replicas.conf';
if (nginxAvailable()) describeWith('postgres', name, suite);
else describe.skip(`${name} (needs nginx)`, () => suite(''));
