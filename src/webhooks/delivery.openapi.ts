/**
 * How a webhook delivery is documented in the OpenAPI `webhooks`: the Standard Webhooks headers this subsystem
 * signs and sends, the type header, and the answer it waits for. Each resource writes its own entries with it
 * (its types, summaries and bodies); src/openapi.ts hands it over.
 */
import type { WebhookSpec } from '../resource';

const header = (description: string, schema: Record<string, unknown>) => ({ required: true, description, schema });

const eventTypeHeader = (type: string) => ({
  in: 'header',
  name: 'webhook-event-type',
  ...header(`The type of the change: \`${type}\`.`, { const: type }),
});

const deliveryHeaders = (): unknown[] => [
  { in: 'header', name: 'webhook-id', ...header('The event id; the same on every retry of this event.', { type: 'string', pattern: '^msg_[0-9a-f]{32}$' }) },
  { in: 'header', name: 'webhook-timestamp', ...header('Unix seconds when this attempt was sent.', { type: 'integer' }) },
  {
    in: 'header',
    name: 'webhook-signature',
    ...header('`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the secret\'s decoded bytes.', {
      type: 'string',
      pattern: '^v1,[A-Za-z0-9+/]+={0,2}$',
    }),
  },
  {
    in: 'header',
    name: 'traceparent',
    required: false,
    description:
      'W3C Trace Context: sent only when the request that made the change (the create, edit or delete) came with a valid traceparent; the same trace id, a new span id per attempt.',
    schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
  },
  {
    in: 'header',
    name: 'webhook-tenant',
    required: false,
    description:
      'With tenants on (TENANT_CLAIM): the name of the tenant whose resource changed, percent-encoded UTF-8 (decodeURIComponent reads it). ' +
      'What was stored before tenants is TENANT_DEFAULT\'s: its name, and no header when TENANT_DEFAULT is unset. Tenants off: never sent. ' +
      'Not signed (Standard Webhooks signs id, timestamp and body): trust it as far as the connection, so use https.',
    schema: { type: 'string', minLength: 1 },
  },
];

/** One webhook entry: the delivery of one change type, signed, with the body the resource describes. */
export function webhookOperation(spec: WebhookSpec): Record<string, unknown> {
  const type = eventTypeHeader(spec.type);
  return {
    post: {
      operationId: spec.operationId,
      summary: spec.summary,
      description: spec.description,
      security: [],
      parameters: spec.typeFirst === true ? [type, ...deliveryHeaders()] : [...deliveryHeaders(), type],
      requestBody: { required: true, description: spec.body.description, content: { 'application/json': { schema: spec.body.schema } } },
      responses: {
        '200': { description: 'Received. Any 2xx within WEBHOOK_TIMEOUT_MS counts as delivered; anything else is retried.' },
      },
    },
  };
}
