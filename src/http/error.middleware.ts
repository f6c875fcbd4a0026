import type { ErrorRequestHandler } from 'express';
import { AppError, catalogue, type Reason } from '../errors';
import type { Logger } from '../logger';
import { localsOf } from '../request-locals';

// body-parser's errors carry a `type`; each known one gets a catalogue row instead of its own status and text.
const PARSER_ERRORS: Record<string, { reason: Reason; message?: (error: { limit?: number }) => string }> = {
  'entity.too.large': {
    reason: 'body_too_large',
    message: ({ limit }) => `The body is larger than the ${limit} bytes this service accepts.`,
  },
  'encoding.unsupported': {
    reason: 'unsupported_media_type',
    message: () => 'Content-Encoding is not supported; send the body uncompressed.',
  },
  'request.size.invalid': { reason: 'malformed_json', message: () => 'The body is shorter or longer than its Content-Length.' },
  'request.aborted': { reason: 'malformed_json', message: () => 'The request was aborted before its body was complete.' },
};

// The router's decoding of a path parameter (router's layer.js decodeParam): a URIError it marks with status 400.
const isPathDecodeError = (error: unknown): boolean => (error as { name?: unknown; status?: unknown } | null)?.name === 'URIError' && (error as { status?: unknown }).status === 400;

function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isPathDecodeError(error)) {
    return new AppError('invalid_parameter', 'The path has malformed percent-encoding; each % must start a UTF-8 byte written as two hex digits.', { cause: error });
  }
  const type = (error as { type?: unknown } | null)?.type;
  const known = typeof type === 'string' ? PARSER_ERRORS[type] : undefined;
  if (known !== undefined) return new AppError(known.reason, known.message?.(error as { limit?: number }), { cause: error });
  return new AppError('internal', undefined, { cause: error });
}

/** The one place a failure becomes a response: the catalogue row's status and code, a message, no internals. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    // Already answered on the raw connection (a request timeout, src/http/http-edges.ts): the failure that
    // follows (the body reader seeing the connection close) must not rewrite what the log says was sent.
    const locals = localsOf(res);
    if (locals.answeredOnSocket === true) return;
    const appError = toAppError(error);
    const row = catalogue[appError.reason];
    locals.errorCode = row.code;
    const traceId = locals.trace?.traceId;
    // The request line already carries the code. A fault adds its stack: a 500 at error level, a store
    // fault is logged once per episode by src/db/health.sqlite.ts, not per request. Shedding and draining add
    // nothing: under overload a line per shed request would cost more than the shedding saves.
    if (appError.reason === 'internal') {
      logger.error({ err: appError.cause ?? appError, reqId: locals.reqId, traceId, error: row.code }, appError.message);
    } else if (row.status >= 500 && appError.cause !== undefined && appError.reason !== 'store_unavailable') {
      logger.warn({ err: appError.cause, reqId: locals.reqId, traceId, error: row.code }, appError.message);
    }
    res.status(row.status).set(appError.headers);
    if (row.status === 503 && !res.hasHeader('Retry-After')) res.set('Retry-After', '1');
    const body: Record<string, unknown> = { error: row.code, message: appError.message };
    if (appError.operation !== undefined) body.operation = appError.operation;
    if (appError.fields !== undefined) body.fields = appError.fields;
    res.json(body);
  };
}
