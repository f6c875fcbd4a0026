import net from 'node:net';
import { aNewPlant } from '../helpers/plants';
import { appForAll, sleep } from '../helpers/fixtures';
import { lockPlants } from '../helpers/store-lock';
import { defaultStore, postPlant, storedRows, TOKEN, type TestApp } from '../helpers/test-app';
import { perProcess } from '../helpers/test-workers';

const OVERLOADED = { error: 50303, message: 'The service is over capacity; retry after the number of seconds in Retry-After.' };

// Creates wait on the lock for up to 10 s; the shedding wait is well above what a busy machine adds by itself.
const app = appForAll({ LOAD_SHED_LAG_MS: '300', DATABASE_BUSY_TIMEOUT_MS: '10000', DATABASE_STATEMENT_TIMEOUT_MS: '10000', DATABASE_CONNECT_TIMEOUT_MS: '9000' });

/**
 * `count` creates that wait on a locked store, all sent at once; settled once the lock is released. The tests give
 * them 2 s to arrive (this event loop is the client's, jest's and the app's at once) before relying on them.
 */
function waitingCreates(count: number) {
  return Promise.all(Array.from({ length: count }, () => postPlant(app, aNewPlant()).then((response) => response.status)));
}

perProcess('the queue of waiting creates is each worker\'s own: LOAD_SHED_LAG_MS applies to each worker (docs/operations.md, Workers)').describe('load shedding on queueing', () => {
  it('when 64 creates have waited longer than LOAD_SHED_LAG_MS, then the next gets 503 with Retry-After and is not stored; health checks answer; the 64 get 200', async () => {
    const lock = await lockPlants(app);
    const queued = waitingCreates(64);
    await sleep(2000);
    const plant = aNewPlant();

    const shed = await postPlant(app, plant);
    const health = await app.request.get('/healthz');
    await lock.release();
    const statuses = await queued;

    expect({ status: shed.status, retryAfter: shed.headers['retry-after'], body: shed.body }).toEqual({ status: 503, retryAfter: '1', body: OVERLOADED });
    expect(health.status).toBe(200);
    expect(statuses).toEqual(Array(64).fill(200));
    expect(storedRows(app).filter((row) => row.id === BigInt(plant.id as number))).toEqual([]);
  });

  // On PostgreSQL the lock this file takes blocks reads of the table as well; SQLite's write lock never blocks reads.
  (defaultStore() === 'sqlite' ? it : it.skip)('when 64 creates have waited for another process\'s write lock longer than LOAD_SHED_LAG_MS, then reads still answer 200: a queue of writes is not a queue of reads', async () => {
    const stored = aNewPlant();
    expect((await postPlant(app, stored)).status).toBe(200);
    const lock = await lockPlants(app);
    const queued = waitingCreates(64);
    await sleep(2000);

    const shed = await postPlant(app, aNewPlant());
    const read = await app.request.get(`/plants/${String(stored.id)}`).set('Authorization', `Bearer ${TOKEN}`);
    const list = await app.request.get('/plants?limit=1').set('Authorization', `Bearer ${TOKEN}`);
    await lock.release();
    const statuses = await queued;

    expect(shed.status).toBe(503);
    expect({ status: read.status, name: (read.body as { name?: unknown }).name }).toEqual({ status: 200, name: stored.name });
    expect(list.status).toBe(200);
    expect(statuses).toEqual(Array(64).fill(200));
  });

  it('when 63 creates wait, as in a closed loop of 64 connections, then the 64th is admitted however long they waited', async () => {
    const lock = await lockPlants(app);
    const queued = waitingCreates(63);
    await sleep(2000);

    const admitted = postPlant(app, aNewPlant());
    await sleep(200);
    await lock.release();
    const statuses = await queued;

    expect((await admitted).status).toBe(200);
    expect(statuses).toEqual(Array(63).fill(200));
  });

  it('when 200 creates arrive at once on a free store, then none is shed: a burst answered at once is not a queue', async () => {
    const statuses = await waitingCreates(200);

    expect(statuses).toEqual(Array(200).fill(200));
  });

  it('when the queue has drained, then creates are admitted again', async () => {
    const lock = await lockPlants(app);
    const queued = waitingCreates(64);
    await sleep(2000);
    const shed = await postPlant(app, aNewPlant());
    await lock.release();
    await queued;

    const after = await postPlant(app, aNewPlant());

    expect([shed.status, after.status]).toEqual([503, 200]);
  });
});

/**
 * `count` connections, each sending a create's headers (half of them without a token) and then its body a byte a
 * second, as a slow or hostile client does; `stop` closes them all.
 */
async function tricklingBodies(target: TestApp, count: number) {
  const port = Number(new URL(target.url).port);
  const body = JSON.stringify(aNewPlant());
  const sockets = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const auth = i % 2 === 0 ? `Authorization: Bearer ${TOKEN}\r\n` : '';
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      return new Promise<net.Socket>((resolve) =>
        socket.once('connect', () => {
          socket.write(`POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
          resolve(socket);
        }),
      );
    }),
  );
  let sent = 0;
  const ticker = setInterval(() => {
    if (sent < body.length - 1) for (const socket of sockets) socket.write(body[sent] ?? '');
    sent += 1;
  }, 1000);
  return {
    stop: () => {
      clearInterval(ticker);
      for (const socket of sockets) socket.destroy();
    },
  };
}

describe('load shedding counts only the service\'s own waiting', () => {
  it('when 300 clients trickle their bodies a byte a second, half of them anonymous, then a create past LOAD_SHED_LAG_MS gets 200 and /healthz answers', async () => {
    const slow = await tricklingBodies(app, 300);
    await sleep(1500);

    const created = await postPlant(app, aNewPlant());
    const health = await app.request.get('/healthz');
    slow.stop();

    expect({ created: created.status, health: health.status }).toEqual({ created: 200, health: 200 });
  });
});
