/**
 * W3C Trace Context: the trace a request names in `traceparent`, continued by the calls the service makes for it
 * (webhook deliveries). Ground floor: imports nothing of the service.
 */
import { randomBytes } from 'node:crypto';

export type TraceContext = { traceId: string; flags: string };

// W3C Trace Context level 1, section 3.2: version-traceid-parentid-flags in lowercase hex. Version 00 is exactly
// that; a later version may append fields after a dash, which we ignore; version ff is invalid.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_PARENT = '0'.repeat(16);

/** The trace a valid traceparent header names; undefined for anything else, which is ignored, never an error. */
export function parseTraceparent(header: string | string[] | undefined): TraceContext | undefined {
  if (typeof header !== 'string' || header.length < 55) return undefined;
  const match = TRACEPARENT.exec(header);
  if (match === null) return undefined;
  const [, version, traceId = '', parentId, flags = ''] = match;
  if (version === 'ff' || (version === '00' && header.length !== 55)) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_PARENT) return undefined;
  return { traceId, flags };
}

/** A traceparent for a call this service makes within the trace (webhook deliveries): same trace, a new span id. */
export function childTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${randomBytes(8).toString('hex')}-${trace.flags}`;
}
