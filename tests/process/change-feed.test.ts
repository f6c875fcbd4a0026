import { aNewPlant } from '../helpers/plants';
import { replicasForEach } from '../helpers/fixtures';
import { describeWith } from '../helpers/optional-services';
import { rawRequest } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { openStream, type SseStream } from '../helpers/sse';

const auth = { Authorization: `Bearer ${TOKEN}` };
const json = { 'Content-Type': 'application/json', ...auth };
const post = async (server: ServerProcess, body: unknown) => (await rawRequest(server.url, { headers: json, body: JSON.stringify(body) })).status;
const createdIn = (reader: SseStream, id: number) => reader.events.some((event) => event.event === 'plant.created' && event.data?.startsWith(`{"id":${id},`));

describe('the change feed of the server process', () => {
  const servers: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('when SIGTERM arrives with streams open, then the streams end at once and the process exits 0 well within the drain time', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_MS: '10000' });
    servers.push(server);
    const readers = await Promise.all([1, 2, 3].map(() => openStream(server.url, '/plants/events', auth)));
    const plant = aNewPlant();
    await post(server, plant);
    await Promise.all(readers.map((reader) => reader.waitFor(() => createdIn(reader, plant.id as number))));

    const started = performance.now();
    server.child.kill('SIGTERM');
    await Promise.all(readers.map((reader) => reader.ended));
    const streamsEndedMs = performance.now() - started;
    const exit = await server.exited;

    expect(readers.map((reader) => reader.status)).toEqual([200, 200, 200]);
    expect(streamsEndedMs).toBeLessThan(2000);
    expect({ exit, elapsedBelowDrain: performance.now() - started < 5000 }).toEqual({ exit: { code: 0, signal: null }, elapsedBelowDrain: true });
  });
});

describeWith('postgres', 'the change feed across two replicas on one PostgreSQL database', (server) => {
  const replicas = replicasForEach(server);

  it('when plants are created through one replica, then a stream on the other sees each within a second, in order, once', async () => {
    const [a, b] = await replicas.two();
    const onB = await openStream(b.url, '/plants/events', auth);
    const onA = await openStream(a.url, '/plants/events', auth);

    const latencies: number[] = [];
    const plants = Array.from({ length: 10 }, () => aNewPlant());
    for (const plant of plants) {
      const sent = performance.now();
      expect(await post(a, plant)).toBe(200);
      await onB.waitFor(() => createdIn(onB, plant.id as number), 1000);
      latencies.push(performance.now() - sent);
    }
    // Concurrent writers on both replicas: each stream sees every event once, in position order.
    const racing = Array.from({ length: 60 }, () => aNewPlant());
    await Promise.all(racing.map((plant, index) => post(index % 2 === 0 ? a : b, plant)));
    for (const reader of [onA, onB]) await reader.waitFor(() => racing.every((plant) => createdIn(reader, plant.id as number)), 5000);

    expect(Math.max(...latencies)).toBeLessThan(1000);
    for (const reader of [onA, onB]) {
      const positions = reader.named().map((event) => BigInt(event.id as string));
      expect(positions).toEqual(positions.map((_, index) => (positions[0] as bigint) + BigInt(index)));
      expect(positions).toHaveLength(70);
    }
    onA.close();
    onB.close();
  });
});
