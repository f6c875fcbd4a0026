/**
 * What the middleware leaves on res.locals for the code after it, typed once: every read and write goes through
 * localsOf. Ground floor: the credentials the auth middleware resolves are src/auth's own (readCredentials).
 */
import type { ServerResponse } from 'node:http';
import type { TenantKey } from './tenant';
import type { TraceContext } from './tracing';

export type RequestLocals = {
  /** The tenant the request acts in, once auth decided it (src/auth); absent before, and with tenants off. */
  tenant?: TenantKey;
  /** The tenant's name an admin acted in with Act-As-Tenant: the request log's `tenant` (an audit trail). */
  actAsTenant?: string;
  /** The request id, logged on every line about the request and sent back as X-Request-Id. */
  reqId?: string;
  /** The caller's W3C trace, when it sent a valid traceparent. */
  trace?: TraceContext;
  /** The catalogue code the response carries, set by the error middleware for the request log and the metrics. */
  errorCode?: number;
  /** The answer already went out on the raw connection (a request timeout in src/http/http-edges.ts). */
  answeredOnSocket?: boolean;
  /** The body's bytes as received (a JSON body), for what fingerprints a request (Idempotency-Key). */
  rawBody?: Buffer;
  /**
   * A write sent with Idempotency-Key that is its caller's first with the key: who, which key, the request's
   * fingerprint and until when its answer is kept. The write's store keeps the answer in the write's transaction
   * and sets `kept`.
   */
  keyed?: { tenant: TenantKey; caller: string; key: string; fingerprint: string; expiresAt: number; kept?: boolean };
};

/** Express adds `locals` to every response it handles; one Node answers on its own (a parser error) has none. */
export function localsOf(res: ServerResponse): RequestLocals {
  return (res as ServerResponse & { locals?: RequestLocals }).locals ?? {};
}
