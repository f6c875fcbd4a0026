import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger';
import { readCredentials, type Credentials } from '../auth';
import { localsOf } from '../request-locals';
import { parseTraceparent } from '../tracing';
import { missingHost } from './http-edges';

// A client's id is echoed into headers and logs, so it must be short and plain.
const WELL_FORMED_ID = /^[\w.:-]{1,128}$/;

/**
 * The path of a request target, nothing else: the query may carry what a client should not have sent, and an
 * absolute-form target (`http://user:token@host/plants`, RFC 9112 3.2.2) may carry credentials.
 */
// Who called, never their secret; none when no valid credentials were presented.
const callerOf = (credentials: Credentials): string | undefined => (credentials.kind === 'valid' ? credentials.caller : undefined);

function pathOf(url: string): string {
  if (url.startsWith('/')) {
    const query = url.indexOf('?');
    return query === -1 ? url : url.slice(0, query);
  }
  try {
    return new URL(url).pathname;
  } catch {
    return '(not a path)';
  }
}

/**
 * Gives every request an id and logs one line when its response is done (or the client went away).
 * `trustsProxy` false: the client is the peer, read straight from the socket; Express's req.ip would parse
 * X-Forwarded-For on every request only to ignore it.
 */
export function requestLog(logger: Logger, trustsProxy: boolean): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const reqId = typeof incoming === 'string' && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID();
    const locals = localsOf(res);
    locals.reqId = reqId;
    res.setHeader('X-Request-Id', reqId);
    // The caller's W3C trace, for this line, the error lines and outbound calls; none without a valid header.
    const trace = parseTraceparent(req.headers.traceparent);
    locals.trace = trace;
    // 'close' comes once per response; `on` spares the once-wrapper and its removal on every request.
    res.on('close', () => {
      const url = req.originalUrl;
      logger.info(
        {
          reqId,
          traceId: trace?.traceId,
          method: req.method,
          // The path only: a query string may carry what a client should not have sent, such as a token.
          path: pathOf(url),
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 10) / 10,
          ip: trustsProxy ? req.ip : req.socket.remoteAddress,
          error: locals.errorCode,
          // Who called, never their secret: token:<n>, sha256:<digest prefix> or sub:<JWT subject>.
          caller: callerOf(readCredentials(req)),
          // Audit: the tenant an admin acted in with Act-As-Tenant; absent for a request in the caller's own.
          tenant: locals.actAsTenant,
          aborted: res.writableFinished ? undefined : true,
        },
        'request',
      );
    });
    next(missingHost(req));
  };
}
