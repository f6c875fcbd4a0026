import net from 'node:net';
import { aNewPlant } from '../helpers/plants';
import { TOKEN, type TestApp } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';
import { untilLogged } from '../helpers/common';

/** Writes these bytes on a fresh connection and collects everything until the server closes it (or waitMs). */
function exchange(app: TestApp, bytes: string, waitMs = 2000): Promise<string> {
  const { port } = new URL(app.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', () => undefined);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(received);
    }, waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

const statusOf = (response: string) => Number(response.slice(9, 12));
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as unknown;

const app = appForAll({ BODY_LIMIT: '1kb' });

describe('requests the HTTP parser refuses', () => {
  it('when the request line is garbage, then it answers 400 40008 as JSON and logs a request line', async () => {
    const response = await exchange(app, 'NOT HTTP AT ALL\r\n\r\n');
    await untilLogged(app, (line) => line.msg === 'request' && line.error === 40008 && line.status === 400);

    expect({ status: statusOf(response), type: /content-type: application\/json/i.test(response), body: bodyOf(response) }).toEqual({
      status: 400,
      type: true,
      body: { error: 40008, message: 'The request is not valid HTTP/1.1.' },
    });
    expect(app.logs.filter((line) => line.msg === 'request' && line.error === 40008 && line.status === 400).length).toBeGreaterThanOrEqual(1);
  });

  it('when the headers are over 16 KiB, then it answers 431 43101 as JSON and logs a request line', async () => {
    const response = await exchange(app, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    await untilLogged(app, (line) => line.msg === 'request' && line.error === 43101 && line.status === 431);

    expect({ status: statusOf(response), body: bodyOf(response) }).toEqual({
      status: 431,
      body: { error: 43101, message: 'The request line and headers are larger than the service accepts.' },
    });
    expect(app.logs.some((line) => line.msg === 'request' && line.error === 43101 && line.status === 431)).toBe(true);
  });

  it('when an HTTP/1.1 request has no Host, then it answers 400 40008 as JSON with a request log line', async () => {
    const response = await exchange(app, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    await untilLogged(app, (line) => line.msg === 'request' && line.path === '/healthz' && line.error === 40008);

    expect({ status: statusOf(response), body: bodyOf(response) }).toEqual({
      status: 400,
      body: { error: 40008, message: 'HTTP/1.1 requires a Host header.' },
    });
    expect(app.logs.some((line) => line.msg === 'request' && line.path === '/healthz' && line.error === 40008)).toBe(true);
  });
});

describe('the request log and the URL', () => {
  it('when the target is in absolute form with credentials, then the log has the path only and never the token', async () => {
    const secret = 'SECRETTOKEN0123456789';
    const body = JSON.stringify(aNewPlant());

    const response = await exchange(
      app,
      `POST http://user:${secret}@example.com/plants?k=${secret} HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    await untilLogged(app, (line) => line.msg === 'request' && line.path === '/plants' && line.status === 200);

    expect(statusOf(response)).toBe(200);
    expect(app.rawLogs.filter((line) => line.includes(secret))).toEqual([]);
    expect(app.logs.some((line) => line.msg === 'request' && line.path === '/plants' && line.status === 200)).toBe(true);
  });
});

describe('Expect: 100-continue', () => {
  const head = (headers: string, length: number) =>
    `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${length}\r\n${headers}\r\n`;

  it('when the client is anonymous, then it answers 401 without inviting the body', async () => {
    const response = await exchange(app, head('', 50), 1000);

    expect(response).not.toContain('100 Continue');
    expect(statusOf(response)).toBe(401);
  });

  it('when Content-Length is over BODY_LIMIT, then it answers 400 40005 without inviting the body', async () => {
    const response = await exchange(app, head(`Authorization: Bearer ${TOKEN}\r\n`, 5000), 1000);

    expect(response).not.toContain('100 Continue');
    expect({ status: statusOf(response), body: bodyOf(response) }).toEqual({
      status: 400,
      body: { error: 40005, message: 'The body is larger than the 1024 bytes this service accepts.' },
    });
  });

  it('when the client is authenticated and the size fits, then it invites the body and stores the plant', async () => {
    const plant = aNewPlant();
    const body = JSON.stringify(plant);
    const { port } = new URL(app.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
      if (received.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !received.includes('200')) socket.write(body);
    });
    const closed = new Promise((resolve) => socket.on('close', resolve));

    socket.write(head(`Authorization: Bearer ${TOKEN}\r\n`, Buffer.byteLength(body)));
    await closed;

    expect(received.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK')).toBe(true);
    expect(bodyOf(received.slice(received.indexOf('HTTP/1.1 200')))).toEqual({ name: plant.name, tag: plant.tag });
  });
});
