import { Pool } from 'undici';
import type { WebhookConfig } from '../config';
import { childTraceparent } from '../http/trace-context';
import { signedHeaders } from './event';
import type { OutboxEvent } from './outbox';
import type { AttemptOutcome } from './webhook-observer';

/** One subscriber's endpoint: its own keep-alive pool, so a slow subscriber holds only its own connections. */
export type Subscriber = { url: string; host: string; path: string; pool: Pool };

export type AttemptResult = { failure: string | undefined; status: number | undefined; outcome: AttemptOutcome };

// Failures that say the subscriber cannot be reached at all, rather than that this one request went wrong.
export const UNREACHABLE = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export function subscriberOf(url: string, config: WebhookConfig): Subscriber {
  const parsed = new URL(url);
  return {
    url,
    host: parsed.host,
    path: `${parsed.pathname}${parsed.search}`,
    // No redirect interceptor: a 3xx is an answer that is not 2xx, so it is retried, never followed.
    pool: new Pool(parsed.origin, {
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

/**
 * One signed POST of the event; the whole attempt, answer included, within `timeoutMs`. `controller` is the
 * attempt's own: the timeout aborts it here, and the dispatcher aborts it at the drain deadline (one controller
 * per attempt, not one linked to another: AbortController and its listeners were about 2% of the process under load).
 */
export async function deliver(subscriber: Subscriber, key: Buffer, event: OutboxEvent, at: number, timeoutMs: number, controller: AbortController): Promise<AttemptResult> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const headers = signedHeaders(key, event.eventId, Math.floor(at / 1000), event.payload);
    // The create's trace, continued: a new span id per attempt, as each attempt is a call of its own.
    if (event.trace !== undefined) headers.traceparent = childTraceparent(event.trace);
    const response = await subscriber.pool.request({
      method: 'POST',
      path: subscriber.path,
      headers,
      body: event.payload,
      signal: controller.signal,
    });
    await response.body.dump();
    const status = response.statusCode;
    const delivered = status >= 200 && status <= 299;
    return { failure: delivered ? undefined : `status ${status}`, status, outcome: delivered ? 'delivered' : 'failed_status' };
  } catch (error) {
    if (timedOut) return { failure: `timeout after ${timeoutMs} ms`, status: undefined, outcome: 'timeout' };
    const failure = describeFailure(error);
    return { failure, status: undefined, outcome: UNREACHABLE.has(failure) ? 'refused' : 'error' };
  } finally {
    clearTimeout(timer);
  }
}
