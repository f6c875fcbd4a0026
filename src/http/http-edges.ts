import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, catalogue, type Reason } from '../errors';
import type { Logger } from '../logger';
import { localsOf } from '../request-locals';

/**
 * What happens before Express sees a request: requests Node's parser refuses (malformed, headers too large,
 * timed out) get the one Error body and a request log line like any other failure, and `Expect:
 * 100-continue` is answered by the body reader, after authentication and the size check.
 */

/** Options for http.createServer: a missing Host is answered by requireHost below, through the app. */
export const SERVER_OPTIONS = { requireHostHeader: false } as const;

function reasonFor(code: string | undefined): Reason {
  if (code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT') return 'request_timeout';
  return 'malformed_request';
}

export function installHttpEdges(server: http.Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The client went away or the socket is done: nobody to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Node's own field for the response in progress on this connection (what its default handler checks too).
    const inFlight = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const reason = reasonFor(error.code);
    const row = catalogue[reason];
    const body = JSON.stringify({ error: row.code, message: row.message });
    const reqId = randomUUID();
    if (inFlight) {
      // A request whose body timed out: its own log line (written when the response closes) gets what the
      // client is told here.
      inFlight.statusCode = row.status;
      const locals = localsOf(inFlight);
      locals.errorCode = row.code;
      locals.answeredOnSocket = true;
    } else {
      logger.info({ reqId, status: row.status, ip: (socket as Duplex & { remoteAddress?: string }).remoteAddress, error: row.code, parser: error.code }, 'request');
    }
    socket.end(
      `HTTP/1.1 ${row.status} ${http.STATUS_CODES[row.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${reqId}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.once('finish', () => socket.destroy());
  });
  // Node would send 100 Continue before the app runs; the body reader sends it once the request may send its body.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Without the invitation the body may still come: the connection cannot carry another request after it.
    res.setHeader('Connection', 'close');
    server.emit('request', req, res);
  });
}

/**
 * HTTP/1.1 requires Host (RFC 9112, 3.2); Node's own check would answer an empty 400 outside the app. Called by
 * the request log middleware rather than mounted as a layer of its own: each layer costs every request a pass.
 */
export function missingHost(req: http.IncomingMessage): AppError | undefined {
  if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return undefined;
  return new AppError('malformed_request', 'HTTP/1.1 requires a Host header.');
}
