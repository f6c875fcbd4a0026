// The one feature ceiling F lacks: the service's request log line. One pino line per request with the same
// fields as the service's (src/http/request-log.middleware.ts: a request id, the trace, method, path, status,
// time, peer, error code, caller, aborted), to the same kind of destination (stdout through sonic-boom in
// 32 KiB buffer writes, flushed every 100 ms; src/logger.ts). Ceiling F+log uses it; the bench never deploys it.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import pino from 'pino';

const WELL_FORMED_ID = /^[\w.:-]{1,128}$/;

function stdoutInBatches(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 32 * 1024, maxWrite: 64 * 1024, maxLength: 4 * 1024 * 1024, contentMode: 'buffer' });
  setInterval(() => stream.flush(), 100).unref();
  return { write: (line: string) => stream.write(Buffer.from(line) as unknown as string) };
}

export function requestLogLine(): RequestHandler {
  const logger = pino({ level: 'info', base: undefined, redact: ['req.headers.authorization', 'headers.authorization'] }, stdoutInBatches());
  return (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const reqId = typeof incoming === 'string' && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', reqId);
    res.on('close', () => {
      const url = req.originalUrl;
      const query = url.indexOf('?');
      logger.info(
        {
          reqId,
          traceId: undefined,
          method: req.method,
          path: query === -1 ? url : url.slice(0, query),
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 10) / 10,
          ip: req.socket.remoteAddress,
          error: res.statusCode >= 400 ? res.statusCode * 100 : undefined,
          caller: res.statusCode === 401 ? undefined : 'token:1',
          aborted: res.writableFinished ? undefined : true,
        },
        'request',
      );
    });
    next();
  };
}
