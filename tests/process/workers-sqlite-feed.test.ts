import { aNewPlant } from '../helpers/plants';
import { openStream, type SseStream } from '../helpers/sse';
import { TOKEN } from '../helpers/test-app';
import { JSON_HEADERS, onNewConnection, waitForLines } from '../helpers/workers';
import { quantile, startSqliteWorkers, type StartedSqliteWorkers as SqliteWorkers } from '../helpers/workers-sqlite';

const createdIn = (reader: SseStream, id: number) => reader.events.some((event) => event.event === 'plant.created' && event.data?.startsWith(`{"id":${id},`));
// Each stream and create on a new connection, so the supervisor hands them to the workers in turn; the request id
// chosen here names, through the log, the worker that served it.
const openNamed = (url: string, name: string) => openStream(url, '/plants/events', { Authorization: `Bearer ${TOKEN}`, Connection: 'close', 'X-Request-Id': name });
const workerOf = (workers: SqliteWorkers, reqId: string) => workers.server.lines.find((line) => line.msg === 'request' && line.reqId === reqId)?.worker;

describe('the change feed at WORKERS=2 on SQLite', () => {
  let workers: SqliteWorkers | undefined;
  afterEach(async () => {
    await workers?.close();
    workers = undefined;
  });

  it('when plants are created on both workers, then every stream on either worker gets every event once, in position order, within 50 ms p99 of the answer', async () => {
    workers = await startSqliteWorkers();
    const { server } = workers;
    const streams = await Promise.all(['stream-1', 'stream-2', 'stream-3', 'stream-4'].map((name) => openNamed(server.url, name)));

    // One at a time: each event's delivery lag on every stream, from the create's answer to its arrival.
    const lags: { cross: boolean; stream: number; ms: number }[] = [];
    const creates: { id: number; reqId: string; answered: number; arrivals: number[] }[] = [];
    for (let index = 0; index < 100; index += 1) {
      const plant = aNewPlant();
      const id = plant.id as number;
      const seen = streams.map((stream) => stream.waitFor(() => createdIn(stream, id), 5000).then(() => performance.now()));
      const reqId = `create-${index}`;
      const answer = await onNewConnection(server.url, { headers: { ...JSON_HEADERS, 'X-Request-Id': reqId }, body: JSON.stringify(plant) });
      expect(answer.status).toBe(200);
      creates.push({ id, reqId, answered: performance.now(), arrivals: await Promise.all(seen) });
    }
    // Then concurrent creates on both workers: their commits interleave.
    const racing = Array.from({ length: 60 }, () => aNewPlant());
    await Promise.all(racing.map((plant) => onNewConnection(server.url, { headers: JSON_HEADERS, body: JSON.stringify(plant) })));
    for (const stream of streams) await stream.waitFor(() => racing.every((plant) => createdIn(stream, plant.id as number)), 10_000);
    for (const stream of streams) stream.close();
    await waitForLines(server, (line) => line.msg === 'request' && typeof line.reqId === 'string' && line.reqId.startsWith('stream-'), 4);
    const streamWorkers = streams.map((_, index) => workerOf(workers as SqliteWorkers, `stream-${index + 1}`));
    for (const create of creates) {
      const by = workerOf(workers, create.reqId);
      create.arrivals.forEach((arrival, stream) => lags.push({ cross: streamWorkers[stream] !== by, stream, ms: Math.max(0, arrival - create.answered) }));
    }
    const cross = lags.filter((lag) => lag.cross).map((lag) => lag.ms);
    const figures = { cross: { n: cross.length, p50: quantile(cross, 0.5), p99: quantile(cross, 0.99), max: Math.max(...cross) } };
    process.stdout.write(`feed delivery lag across workers (ms after the answer): ${JSON.stringify(figures)}\n`);

    expect(new Set(streamWorkers)).toEqual(new Set([1, 2]));
    expect(new Set(creates.map((create) => workerOf(workers as SqliteWorkers, create.reqId)))).toEqual(new Set([1, 2]));
    for (const stream of streams) {
      const named = stream.named();
      const positions = named.map((event) => BigInt(event.id as string));
      expect(positions).toEqual(positions.map((_, index) => 1n + BigInt(index)));
      expect(named).toHaveLength(160);
      expect(new Set(named.map((event) => event.data)).size).toBe(160);
    }
    expect(figures.cross.p99).toBeLessThan(50);
  }, 60_000);
});
