import { createHmac, randomUUID } from 'node:crypto';
import type { ChangeEntry } from '../change-outbox';
import type { TenantsConfig } from '../config';
import { tenantNameOf, type TenantKey } from '../tenant';
import type { TraceContext } from '../tracing';

/**
 * A delivery's body: the Standard Webhooks envelope, so the type is signed with the body, around the resource's
 * JSON text; or that text alone where the resource's contract fixed the body before envelopes (`bare`).
 */
export const bodyOf = ({ type, data, bare }: Pick<ChangeEntry, 'type' | 'data' | 'bare'>): string =>
  bare === true ? data : `{"type":${JSON.stringify(type)},"data":${data}}`;

/** One id per event, the same on every retry: the receiver's dedup key (Standard Webhooks `webhook-id`). */
export const newEventId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;

/** The secret's key bytes: whsec_ and base64, as the standardwebhooks libraries decode it. */
export const decodeSecret = (secret: string): Buffer => Buffer.from(secret.slice('whsec_'.length), 'base64');

/**
 * Standard Webhooks headers for one attempt: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, once per key,
 * space-separated; a receiver accepts the delivery when any one of them verifies with its secret.
 */
export function signedHeaders(keys: readonly Buffer[], eventId: string, timestampSeconds: number, body: string, type: string): Record<string, string> {
  const content = `${eventId}.${timestampSeconds}.${body}`;
  return {
    'content-type': 'application/json',
    'webhook-event-type': type,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': keys.map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`).join(' '),
  };
}

/**
 * The webhook-tenant header's value for an event's tenant, or undefined for no header: with tenants on, the tenant's
 * name percent-encoded (encodeURIComponent: UTF-8, every byte outside the unreserved set, so any name is one
 * header token); the shared key is TENANT_DEFAULT's name, and no header when TENANT_DEFAULT is unset. Tenants off
 * (`tenants` undefined): never a header, so a store without tenants sends what it always sent.
 */
export function tenantHeaderOf(tenants: Pick<TenantsConfig, 'defaultName'> | undefined): (key: TenantKey) => string | undefined {
  if (tenants === undefined) return () => undefined;
  return (key) => {
    const name = tenantNameOf(key, tenants.defaultName);
    return name === undefined ? undefined : encodeURIComponent(name);
  };
}

/** The outbox's trace_context column, `<trace id>-<flags>`: all a delivery needs to continue the create's trace. */
export const traceColumn = (trace: TraceContext | undefined): string | null => (trace === undefined ? null : `${trace.traceId}-${trace.flags}`);

export function traceOfColumn(value: string | null): TraceContext | undefined {
  if (value === null) return undefined;
  const [traceId = '', flags = ''] = value.split('-');
  return { traceId, flags };
}
