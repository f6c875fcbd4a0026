import { Pool, type Dispatcher } from 'undici';
import type { WebhookConfig, WebhookSubscriber } from '../config';
import { escapeLineSeparators } from '../json-text';
import { childTraceparent } from '../tracing';
import { signedHeaders } from './event';
import type { OutboxEvent } from './outbox';
import type { AttemptOutcome } from './observer';

/** One subscriber's endpoint: its own keep-alive pool, so a slow subscriber holds only its own connections. */
export type Subscriber = { url: string; host: string; path: string; pool: Pool };

export type AttemptResult = { failure: string | undefined; status: number | undefined; outcome: AttemptOutcome };

// Failures that say the subscriber cannot be reached at all, rather than that this one request went wrong.
export const UNREACHABLE = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export function subscriberOf({ url, origin, host, path }: WebhookSubscriber, config: Pick<WebhookConfig, 'connections' | 'timeoutMs'>): Subscriber {
  return {
    url,
    host,
    path,
    // No redirect interceptor: a 3xx is an answer that is not 2xx, so it is retried, never followed.
    pool: new Pool(origin, {
      connections: config.connections,
      pipelining: 1,
      connect: { timeout: config.timeoutMs },
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
    }),
  };
}

function describeFailure(error: unknown): string {
  const { code } = (error ?? {}) as { code?: unknown };
  if (typeof code === 'string') return code;
  return error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
}

/** An attempt on its way: `result` settles once, with its outcome; `abort()` ends it now (the drain deadline). */
export type InFlightAttempt = { result: Promise<AttemptResult>; abort: () => void };

/**
 * One signed POST of the event; the whole attempt, answer included, within `timeoutMs` (also while it waits for
 * one of the pool's connections). Sent with undici's dispatch handler rather than `request()`: only the status
 * matters, so the body stream, the promise and the abort-signal listeners request() makes for every attempt
 * are work for nothing (the answer's bytes are received and dropped).
 */
export function deliver(subscriber: Subscriber, keys: readonly Buffer[], event: OutboxEvent, at: number, timeoutMs: number, tenant?: string): InFlightAttempt {
  let settle!: (result: AttemptResult) => void;
  const result = new Promise<AttemptResult>((resolve) => (settle = resolve));
  let controller: Dispatcher.DispatchController | undefined;
  let stopped: Error | undefined;
  let status = 0;
  const finish = (outcome: AttemptResult) => {
    clearTimeout(timer);
    settle(outcome);
  };
  const stop = (reason: Error) => {
    stopped ??= reason;
    controller?.abort(stopped);
  };
  const timer = setTimeout(() => {
    // Settled first: aborting reports an error to the handler at once. The status line is the answer: a 2xx
    // whose body is still coming when time is up is delivered (retrying would send the event again to a
    // subscriber that took it), and the connection is closed so its endless body holds no slot of the pool.
    if (status >= 200 && status <= 299) finish({ failure: undefined, status, outcome: 'delivered' });
    else if (status !== 0) finish({ failure: `status ${status}`, status, outcome: 'failed_status' });
    else finish({ failure: `timeout after ${timeoutMs} ms`, status: undefined, outcome: 'timeout' });
    stop(new Error('timeout'));
  }, timeoutMs);
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: (started) => {
      controller = started;
      if (stopped !== undefined) started.abort(stopped);
    },
    onResponseStart: (_controller, statusCode) => {
      // Informational answers (100 Continue, 103 Early Hints) are not the answer.
      if (statusCode >= 200) status = statusCode;
    },
    onResponseEnd: () => {
      const delivered = status >= 200 && status <= 299;
      finish({ failure: delivered ? undefined : `status ${status}`, status, outcome: delivered ? 'delivered' : 'failed_status' });
    },
    onResponseError: (_controller, error) => {
      const failure = describeFailure(error);
      finish({ failure, status: undefined, outcome: UNREACHABLE.has(failure) ? 'refused' : 'error' });
    },
  };
  try {
    // Escaped here, where the body goes on the wire: every outbox row, whichever store or version wrote it.
    const body = escapeLineSeparators(event.payload);
    const headers = signedHeaders(keys, event.eventId, Math.floor(at / 1000), body, event.type);
    // The create's trace, continued: a new span id per attempt, as each attempt is a call of its own.
    if (event.trace !== undefined) headers.traceparent = childTraceparent(event.trace);
    // The tenant's name (tenantHeaderOf), outside the signature: Standard Webhooks signs id, timestamp and body.
    if (tenant !== undefined) headers['webhook-tenant'] = tenant;
    subscriber.pool.dispatch({ method: 'POST', path: subscriber.path, headers, body }, handler);
  } catch (error) {
    handler.onResponseError?.(undefined as never, error as Error);
  }
  return { result, abort: () => stop(new Error('aborted at the drain deadline')) };
}
