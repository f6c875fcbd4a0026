import net from 'node:net';
import { aNewPlant } from '../helpers/plants';
import { halfSentRequest, rawRequest, statusOf } from '../helpers/raw-request';
import { startServer } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { sleep } from '../helpers/common';

describe('graceful shutdown of the server process', () => {
  it('when SIGTERM arrives with 20 requests in flight, then each completes with 200, new connections are refused and it exits 0', async () => {
    const server = await startServer();
    const plants = Array.from({ length: 20 }, () => aNewPlant());
    const inFlight = plants.map((plant) => halfSentRequest(server.url, JSON.stringify(plant)));
    await server.waitForLine(() => true);
    await sleep(200);

    server.child.kill('SIGTERM');
    await server.waitForLine((line) => String(line.msg).startsWith('shutting down'));
    const refused = await rawRequest(server.url, { method: 'GET', path: '/healthz' }).then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code,
    );
    const responses = await Promise.all(inFlight.map((request) => request.finish()));
    const exit = await server.exited;

    expect(responses.map(statusOf)).toEqual(Array(20).fill(200));
    expect(responses.every((response) => /\r\nConnection: close\r\n/i.test(response))).toBe(true);
    expect(['ECONNREFUSED', 'ECONNRESET']).toContain(refused);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.lines.filter((line) => line.msg === 'request' && line.status === 200)).toHaveLength(20);
    expect(server.lines.at(-1)).toMatchObject({ msg: 'stopped', code: 0 });
  });

  it('when idle keep-alive connections are open, then SIGINT still ends the process at once', async () => {
    const server = await startServer();
    const { port } = new URL(server.url);
    const idle = net.connect(Number(port), '127.0.0.1');
    idle.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise((resolve) => idle.once('data', resolve));
    const started = Date.now();

    const exit = await server.stop('SIGINT');

    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(2000);
    idle.destroy();
  });

  it('when a request outlives SHUTDOWN_TIMEOUT_MS, then the connection is closed and the exit code is 1', async () => {
    const server = await startServer({ SHUTDOWN_TIMEOUT_MS: '300' });
    const stuck = halfSentRequest(server.url, JSON.stringify(aNewPlant()));
    await sleep(100);

    const exit = await server.stop('SIGTERM');
    void stuck;

    expect(exit).toEqual({ code: 1, signal: null });
    expect(server.lines.some((line) => line.msg === 'drain timed out; closing the connections still open')).toBe(true);
  });
});

describe('slow and oversized clients', () => {
  it('when a client sends headers too slowly, then the server gives up after HEADERS_TIMEOUT_MS', async () => {
    const server = await startServer({ HEADERS_TIMEOUT_MS: '1000' });
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.write('POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    socket.resume();
    const started = Date.now();

    await new Promise((resolve) => socket.on('close', resolve));
    const elapsed = Date.now() - started;
    await server.stop();

    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(4000);
  });

  it('when a body over BODY_LIMIT keeps streaming, then the server reads it off, answers 400 and keeps the connection', async () => {
    const server = await startServer({ BODY_LIMIT: '1kb' });
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    const errors: string[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(String(error.code)));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    const chunk = 'x'.repeat(16 * 1024);
    const total = chunk.length * 16;
    socket.write(`POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`);

    for (let i = 0; i < 16; i += 1) {
      await new Promise((resolve) => socket.write(chunk, resolve));
      await sleep(20);
    }
    await sleep(100);
    const plant = JSON.stringify(aNewPlant());
    socket.write(`POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${plant.length}\r\n\r\n${plant}`);
    await sleep(200);
    socket.destroy();
    await server.stop();

    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(errors).toEqual([]);
    expect(statuses).toEqual([400, 200]);
    expect(received).toContain('"error":40005');
  });
});
