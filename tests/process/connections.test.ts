import net from 'node:net';
import { rawRequest } from '../helpers/raw-request';
import { startServer } from '../helpers/server-process';
import { sleep } from '../helpers/common';

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

describe('MAX_CONNECTIONS', () => {
  it('when the cap is reached, then a new connection is closed unanswered, and /healthz answers again once one closes', async () => {
    const server = await startServer({ MAX_CONNECTIONS: '3' });
    const held = await Promise.all([connect(server.url), connect(server.url), connect(server.url)]);
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
});
