import net from 'node:net';
import { rawRequest } from '../helpers/raw-request';
import { aNewPlant } from '../helpers/plants';
import { startServer } from '../helpers/server-process';
import { sleep } from '../helpers/common';
import { TOKEN } from '../helpers/test-app';
import { perProcess } from '../helpers/test-workers';

function connect(url: string): Promise<net.Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** What a socket receives until the server closes it (or until timeoutMs, then 'still open'). */
function untilClosed(socket: net.Socket, timeoutMs: number): Promise<string> {
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still open'), timeoutMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

describe('the drain does not wait for clients with nothing to wait for', () => {
  it('when a slowloris client is still sending headers at SIGTERM, then the process exits 0 within a second', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_MS: '5000' });
    const slow = await connect(server.url);
    slow.write('POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const closed = untilClosed(slow, 5000);
    await sleep(100);
    const started = performance.now();

    const exit = await server.stop('SIGTERM');

    expect(exit).toEqual({ code: 0, signal: null });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await closed).not.toBe('still open');
  });

  it('when an anonymous body is still trickling after its 401 at SIGTERM, then the process exits 0 within a second', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_MS: '5000' });
    const trickle = await connect(server.url);
    const closed = untilClosed(trickle, 5000);
    trickle.write('POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"id": 1,');
    await sleep(200);
    const ticker = setInterval(() => trickle.write(' '), 50);
    const started = performance.now();

    const exit = await server.stop('SIGTERM');
    clearInterval(ticker);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await closed).toMatch(/^HTTP\/1\.1 401 /);
  });
});

/** A keep-alive connection that has had one answer and now sits idle. */
async function idleKeepAlive(url: string): Promise<net.Socket> {
  const socket = await connect(url);
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await new Promise((resolve) => socket.once('data', resolve));
  return socket;
}

/** A connection with a create in progress: its body is half sent. */
async function busy(url: string): Promise<net.Socket> {
  const socket = await connect(url);
  socket.write(`POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id": 1,`);
  return socket;
}

const create = (url: string) =>
  rawRequest(url, { headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(aNewPlant()) }).then(
    (response) => response.status,
    (error: NodeJS.ErrnoException) => error.code,
  );

/**
 * `clients` clients, each in a closed loop of creates on its own keep-alive connection until `until`: the next
 * request goes as soon as the answer is in. A loyal client counts the server closing its connection and stops;
 * a newcomer connects again and sends anew, as autocannon does. `answered` resolves once every client has had
 * an answer (or has stopped).
 */
function closedLoop(url: string, clients: number, until: number, reconnect: boolean) {
  const port = Number(new URL(url).port);
  const tally = { created: 0, closed: 0 };
  const request = () => {
    const body = JSON.stringify(aNewPlant());
    return `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  const firstAnswers: Promise<void>[] = [];
  const client = (done: () => void, answered: () => void) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
      for (;;) {
        const headEnd = received.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(received.slice(0, headEnd))?.[1] ?? 0);
        if (headEnd < 0 || received.length < headEnd + 4 + length) return;
        if (received.startsWith('HTTP/1.1 200 ')) tally.created += 1;
        answered();
        received = received.slice(headEnd + 4 + length);
        if (performance.now() < until) socket.write(request());
        else socket.end();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (performance.now() >= until) return done();
      tally.closed += 1;
      if (reconnect) client(done, answered);
      else done();
    });
    socket.write(request());
  };
  const finished = Array.from({ length: clients }, () => {
    let answered = () => undefined as void;
    firstAnswers.push(new Promise<void>((resolve) => (answered = resolve)));
    return new Promise<void>((resolve) => client(resolve, () => answered()));
  });
  return { tally, answered: Promise.all(firstAnswers), finished: Promise.all(finished) };
}

perProcess('MAX_CONNECTIONS applies to each worker, and which worker a connection reaches is the supervisor\'s round-robin').describe('MAX_CONNECTIONS', () => {
  it('when the cap is filled with idle keep-alive connections, then a create is answered 200 and the longest-idle connection is the one closed', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '3' });
    const held: net.Socket[] = [];
    for (let i = 0; i < 3; i += 1) held.push(await idleKeepAlive(server.url));
    const outcomes = held.map((socket) => untilClosed(socket, 2500));
    // Idle for more than the second below which a connection may only not have been read yet.
    await sleep(1100);

    const status = await create(server.url);
    const closed = await Promise.all(outcomes);
    for (const socket of held) socket.destroy();
    await server.stop();

    expect(status).toBe(200);
    expect(closed.map((received) => received === 'still open')).toEqual([false, true, true]);
  });

  it('when every connection at the cap has a request in progress, then a new connection is closed unanswered, and /healthz answers again once one closes', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '3' });
    const held = await Promise.all([busy(server.url), busy(server.url), busy(server.url)]);
    await sleep(100);

    const refused = await connect(server.url).then((socket) => untilClosed(socket, 2000));
    held[0]?.destroy();
    await sleep(100);
    const health = await rawRequest(server.url, { method: 'GET', path: '/healthz' });
    for (const socket of held) socket.destroy();
    await server.stop();

    expect(refused).toBe('');
    expect({ status: health.status, body: health.body }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('when newcomers keep connecting at the cap while every held connection is in a closed loop of creates, then no held connection is closed: one between its answer and its next request is not idle', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '10' });
    const until = performance.now() + 4000;
    const held = closedLoop(server.url, 10, until, false);
    await held.answered;

    const newcomers = closedLoop(server.url, 20, until, true);
    await Promise.all([held.finished, newcomers.finished]);
    await server.stop();

    expect(held.tally.closed).toBe(0);
    expect(held.tally.created).toBeGreaterThan(10);
    expect(newcomers.tally.closed).toBeGreaterThan(0);
  });
});

perProcess('the open-file limit and the cap it leaves are each process\'s own').describe('MAX_CONNECTIONS by default, under the open-file limit', () => {
  it('when 300 connections sent one request each and sit idle under a limit of 256 descriptors, then /healthz and a create answer, and the start line names the cap', async () => {
    const server = await startServer({}, { fdLimit: 256 });
    const listening = await server.waitForLine((line) => line.msg === 'listening');
    const port = Number(new URL(server.url).port);
    const held = Array.from({ length: 300 }, () => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
      socket.on('error', () => undefined);
      return socket;
    });
    await sleep(1500);

    const health = await rawRequest(server.url, { method: 'GET', path: '/healthz', timeoutMs: 3000 }).then(
      (response) => response.status,
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    const created = await create(server.url);
    for (const socket of held) socket.destroy();
    await server.stop();

    expect({ health, created }).toEqual({ health: 200, created: 200 });
    expect(listening).toMatchObject({ maxConnections: expect.any(Number), openFileLimit: 256 });
    expect(listening.maxConnections).toBeLessThan(256);
  });

  it('when MAX_CONNECTIONS is set above what a limit of 256 descriptors leaves room for, then it is lowered with a warning naming both', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '5000' }, { fdLimit: 256 });
    const listening = await server.waitForLine((line) => line.msg === 'listening');
    await server.stop();

    expect(server.lines.find((line) => line.level === 40)).toMatchObject({
      msg: 'MAX_CONNECTIONS is more than the open-file limit leaves room for; lowered',
      configured: 5000,
      maxConnections: listening.maxConnections,
      openFileLimit: 256,
    });
    expect(listening.maxConnections).toBeLessThan(256);
  });
});
