import http from 'node:http';
import net from 'node:net';
import { TOKEN } from './test-app';

/** `text`: the body's bytes as UTF-8, for comparing answers byte for byte; `body`: the same parsed as JSON. */
export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; body: unknown; text: string };

/** One request with exactly these headers and bytes: no client adds a Content-Type or re-encodes the body. */
export function rawRequest(
  baseUrl: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer | string; localAddress?: string; /** Fails the request when no answer has come by then. */ timeoutMs?: number },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${options.path ?? '/plants'}`, { method: options.method ?? 'POST', headers: options.headers, localAddress: options.localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text === '' ? undefined : JSON.parse(text), text });
      });
    });
    request.on('error', reject);
    if (options.timeoutMs !== undefined) request.setTimeout(options.timeoutMs, () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.end(options.body);
  });
}

/**
 * Requests to a server a test is about to kill: a keep-alive pool of 50 sockets, the bearer token and a JSON type
 * on each, and a connection error (the process gone) answered as status 0 rather than thrown. `timeoutMs`: a
 * request unanswered by then is given up as status 0 too (a connection the cluster's supervisor was handing to a
 * worker as it died is never answered: docs/decisions/workers.md).
 */
export function requestsUntilKilled(token: string, timeoutMs?: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  const send = (url: string, method: string, pathname: string, options: { body?: string; headers?: Record<string, string> } = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve) => {
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...options.headers };
      const request = http.request(`${url}${pathname}`, { method, agent, headers }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
      });
      request.on('error', () => resolve({ status: 0, headers: {} }));
      if (timeoutMs !== undefined) request.setTimeout(timeoutMs, () => request.destroy());
      request.end(options.body);
    });
  return { send, close: () => agent.destroy() };
}

/** A POST /plants on its own socket whose body is sent in two halves, so it can be held in flight. */
export function halfSentRequest(url: string, body: string) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let response = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    response += chunk;
  });
  // A process killed with the request in flight resets it: the answer is then what came before, often nothing.
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
  );
  return {
    finish: () => {
      socket.write(body.slice(half));
      return closed;
    },
  };
}

/** The status of a raw HTTP/1.1 response's text. */
export const statusOf = (rawResponse: string): number => Number(rawResponse.slice(9, 12));
