import { aNewPlant } from '../helpers/plants';
import { nginxAvailable, startNginx, startNginxReplicas } from '../helpers/nginx';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { rawRequest } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { openStream, type SseStream } from '../helpers/sse';
import { TOKEN } from '../helpers/test-app';

const auth = { Authorization: `Bearer ${TOKEN}` };
const json = { 'Content-Type': 'application/json', ...auth };
const createdIn = (reader: SseStream, id: number) => reader.events.some((event) => event.event === 'plant.created' && event.data?.startsWith(`{"id":${id},`));

// Without nginx the suite is skipped (globalSetup says so); under CI that is a failure (optional-services.ts).
const describeWithNginx = nginxAvailable() ? describe : describe.skip;

describeWithNginx('the change feed through docker/nginx.conf', () => {
  let server: ServerProcess;
  let proxy: { url: string; stop: () => Promise<void> };

  beforeAll(async () => {
    server = await startServer({ TRUST_PROXY: '1', EVENTS_HEARTBEAT: '300ms' });
    proxy = await startNginx(Number(new URL(server.url).port));
  });
  afterAll(async () => {
    await proxy.stop();
    await server.stop();
  });

  it('when a stream is read through nginx, then each event and heartbeat arrives as it is written, not buffered', async () => {
    const reader = await openStream(proxy.url, '/plants/events', auth);
    await reader.waitFor((events) => events.filter((event) => event.comment !== undefined).length >= 2, 2000);

    const latencies: number[] = [];
    for (let n = 0; n < 5; n += 1) {
      const plant = aNewPlant();
      const sent = performance.now();
      expect((await rawRequest(proxy.url, { path: '/plants', headers: json, body: JSON.stringify(plant) })).status).toBe(200);
      await reader.waitFor(() => createdIn(reader, plant.id as number), 1000);
      latencies.push(performance.now() - sent);
    }
    reader.close();

    expect({ status: reader.status, type: reader.headers['content-type'], slowest: Math.max(...latencies) < 1000 }).toEqual({
      status: 200,
      type: 'text/event-stream',
      slowest: true,
    });
  });
});

describeWith('postgres', 'the change feed through docker/nginx.replicas.conf', (pg) => {
  const describeReplicas = nginxAvailable() ? describe : describe.skip;
  describeReplicas('two replicas', () => {
    let database: TestDatabase;
    const running: ServerProcess[] = [];
    let proxy: { url: string; stop: () => Promise<void> };

    beforeAll(async () => {
      database = await createTestDatabase(pg);
      const env = { DATABASE_URL: database.url, TRUST_PROXY: '1', EVENTS_HEARTBEAT: '300ms' };
      running.push(...(await Promise.all([startServer(env), startServer(env)])));
      proxy = await startNginxReplicas([Number(new URL(running[0]?.url as string).port), Number(new URL(running[1]?.url as string).port)]);
    });
    afterAll(async () => {
      await proxy.stop();
      await Promise.all(running.map((replica) => replica.stop()));
      await database.drop();
    });

    it('when streams and creates are balanced over both replicas, then every stream sees every create within a second', async () => {
      const readers = await Promise.all([1, 2, 3, 4].map(() => openStream(proxy.url, '/plants/events', auth)));

      for (let n = 0; n < 6; n += 1) {
        const plant = aNewPlant();
        expect((await rawRequest(proxy.url, { path: '/plants', headers: json, body: JSON.stringify(plant) })).status).toBe(200);
        await Promise.all(readers.map((reader) => reader.waitFor(() => createdIn(reader, plant.id as number), 1000)));
      }
      for (const reader of readers) reader.close();

      expect(readers.map((reader) => reader.status)).toEqual([200, 200, 200, 200]);
    });
  });
});
