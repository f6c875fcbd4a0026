import { createHmac, randomUUID } from 'node:crypto';
import type { TraceContext } from '../tracing';
import { deletedPlantJson, plantJson } from '../plants/plant.json';
import type { StoredPlant } from '../plants/plant.repository';
import type { NewPlant } from '../plants/plant.schemas';

/** The body of a plant.created delivery: the NewPlant as sent, the StoredPlant form (the contract's body). */
export const newPlantPayload = (plant: NewPlant): string => plantJson(plant);

/**
 * The body of a plant.updated or plant.deleted delivery: the Standard Webhooks envelope, so the type is signed
 * with the body; `data` is the plant as GET /plants/{id} answers it after the edit, `{id}` alone for a delete.
 * (plant.created keeps the contract's body, the NewPlant itself.)
 */
export function changePayload(kind: 'updated' | 'deleted', plant: StoredPlant): string {
  const { before, after } = changeEnvelope(kind);
  return before + (kind === 'deleted' ? deletedPlantJson(plant.id) : plantJson(plant)) + after;
}

/** The text of an edit's or a delete's body around its `data`: what PostgreSQL's statement writes the stored plant between. */
export const changeEnvelope = (kind: 'updated' | 'deleted'): { before: string; after: string } => ({ before: `{"type":"plant.${kind}","data":`, after: '}' });

/** One id per event, the same on every retry: the receiver's dedup key (Standard Webhooks `webhook-id`). */
export const newEventId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;

/** The secret's key bytes: whsec_ and base64, as the standardwebhooks libraries decode it. */
export const decodeSecret = (secret: string): Buffer => Buffer.from(secret.slice('whsec_'.length), 'base64');

/**
 * Standard Webhooks headers for one attempt: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, once per key,
 * space-separated; a receiver accepts the delivery when any one of them verifies with its secret.
 */
export function signedHeaders(keys: readonly Buffer[], eventId: string, timestampSeconds: number, body: string, type = 'plant.created'): Record<string, string> {
  const content = `${eventId}.${timestampSeconds}.${body}`;
  return {
    'content-type': 'application/json',
    'webhook-event-type': type,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': keys.map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`).join(' '),
  };
}

/** The outbox's trace_context column, `<trace id>-<flags>`: all a delivery needs to continue the create's trace. */
export const traceColumn = (trace: TraceContext | undefined): string | null => (trace === undefined ? null : `${trace.traceId}-${trace.flags}`);

export function traceOfColumn(value: string | null): TraceContext | undefined {
  if (value === null) return undefined;
  const [traceId = '', flags = ''] = value.split('-');
  return { traceId, flags };
}
