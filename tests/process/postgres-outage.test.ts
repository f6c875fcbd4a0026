import { aNewPlant } from '../helpers/plants';
import { createTestDatabase, databaseUrl, type TestDatabase } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { rawRequest, type RawResponse } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { TOKEN } from '../helpers/test-app';
import { sleep } from '../helpers/common';
import { expectOnePerProcess } from '../helpers/test-workers';

const json = { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` };
const STATEMENT_TIMEOUT_MS = 1500;

async function timed<T>(action: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await action();
  return { result, ms: Date.now() - started };
}

const post = (server: ServerProcess, body: unknown) => rawRequest(server.url, { headers: json, body: JSON.stringify(body) });
const get = (server: ServerProcess, path: string) => rawRequest(server.url, { method: 'GET', path });

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`not within ${timeoutMs} ms`);
}

const unavailable = (response: RawResponse) => ({
  status: response.status,
  retryAfter: response.headers['retry-after'],
  error: (response.body as { error?: number } | undefined)?.error,
});

describeWith('postgres', 'PostgreSQL outages, through a TCP proxy the test cuts', (server) => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let service: ServerProcess | undefined;

  beforeEach(async () => {
    database = await createTestDatabase(server);
    const target = new URL(server);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });

  afterEach(async () => {
    await service?.stop('SIGKILL');
    await proxy.close();
    await database.drop();
  });

  const startBehindProxy = () =>
    startServer({
      DATABASE_URL: databaseUrl(`postgres://${new URL(server).username || 'postgres'}@127.0.0.1:${proxy.port}/x`, database.name),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
    });

  it('when PostgreSQL cannot be reached at start, then the process starts unready, answers 503 to writes, and becomes ready when it appears', async () => {
    await proxy.cut();

    service = await startBehindProxy();
    const health = await get(service, '/healthz');
    const ready = await get(service, '/readyz');
    const plant = aNewPlant();
    const write = await timed(() => post(service as ServerProcess, plant));
    await proxy.restore();
    await eventually(async () => (await get(service as ServerProcess, '/readyz')).status === 200);
    const afterwards = await post(service, plant);

    expect({ health: health.status, ready: unavailable(ready), write: unavailable(write.result) }).toEqual({
      health: 200,
      ready: { status: 503, retryAfter: '1', error: 50301 },
      write: { status: 503, retryAfter: '1', error: 50301 },
    });
    expect(write.ms).toBeLessThan(STATEMENT_TIMEOUT_MS);
    expect({ status: afterwards.status, body: afterwards.body }).toEqual({ status: 200, body: { name: plant.name, tag: 'indoor' } });
    expectOnePerProcess(service.lines.filter((line) => line.msg === 'PostgreSQL cannot be reached; starting unready and retrying'));
  });

  it('when PostgreSQL goes away while running, then writes and /readyz answer 503 at once, and it recovers with no restart', async () => {
    service = await startBehindProxy();
    const before = aNewPlant();
    const created = await post(service, before);

    await proxy.cut();
    const health = await get(service, '/healthz');
    const ready = await timed(() => get(service as ServerProcess, '/readyz'));
    const writes = await timed(() => Promise.all(Array.from({ length: 5 }, () => post(service as ServerProcess, aNewPlant()))));
    await proxy.restore();
    await eventually(async () => (await get(service as ServerProcess, '/readyz')).status === 200);
    const retry = await post(service, before);
    const after = await post(service, aNewPlant());

    expect(created.status).toBe(200);
    expect({ health: health.status, ready: unavailable(ready.result), writes: writes.result.map(unavailable) }).toEqual({
      health: 200,
      ready: { status: 503, retryAfter: '1', error: 50301 },
      writes: Array(5).fill({ status: 503, retryAfter: '1', error: 50301 }),
    });
    expect(Math.max(ready.ms, writes.ms)).toBeLessThan(STATEMENT_TIMEOUT_MS + 500);
    expect([retry.status, after.status]).toEqual([200, 200]);
    expect(service.child.exitCode).toBeNull();
  });

  it('when the network to PostgreSQL turns into a black hole, then no request waits longer than the statement timeout', async () => {
    service = await startBehindProxy();
    expect((await post(service, aNewPlant())).status).toBe(200);

    proxy.stall();
    const [write, ready] = await Promise.all([timed(() => post(service as ServerProcess, aNewPlant())), timed(() => get(service as ServerProcess, '/readyz'))]);
    await proxy.restore();
    await eventually(async () => (await post(service as ServerProcess, aNewPlant())).status === 200);

    expect({ write: unavailable(write.result), ready: unavailable(ready.result) }).toEqual({
      write: { status: 503, retryAfter: '1', error: 50301 },
      ready: { status: 503, retryAfter: '1', error: 50301 },
    });
    // The bound plus what a loaded machine adds to answering.
    expect(write.ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 100);
    expect(Math.max(write.ms, ready.ms)).toBeLessThan(STATEMENT_TIMEOUT_MS + 750);
  });
});
