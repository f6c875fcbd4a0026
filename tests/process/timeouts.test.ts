import net from 'node:net';
import { startServer } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

function collectUntilClosed(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(bytes));
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.on('close', () => resolve(received)));
}

const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as unknown;

describe('requests that time out', () => {
  it('when the headers do not arrive within HEADERS_TIMEOUT_MS, then it answers 408 40801 as JSON and logs it', async () => {
    const server = await startServer({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '5000' });

    const response = await collectUntilClosed(server.url, 'POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const line = await server.waitForLine((entry) => entry.msg === 'request' && entry.error === 40801);
    await server.stop();

    expect({ status: response.slice(0, 12), body: bodyOf(response) }).toEqual({
      status: 'HTTP/1.1 408',
      body: { error: 40801, message: 'The request did not arrive in time; send it again, faster.' },
    });
    expect(line).toMatchObject({ status: 408 });
  });

  it('when the body does not arrive within REQUEST_TIMEOUT_MS, then the client gets 408 and the log says 408, not 200', async () => {
    const server = await startServer({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500' });

    const response = await collectUntilClosed(
      server.url,
      `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":`,
    );
    const line = await server.waitForLine((entry) => entry.msg === 'request' && entry.path === '/plants');
    await server.stop();

    expect(response.slice(0, 12)).toBe('HTTP/1.1 408');
    expect(line).toMatchObject({ status: 408, error: 40801 });
  });
});
