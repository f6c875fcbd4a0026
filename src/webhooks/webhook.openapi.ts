const header = (description: string, schema: Record<string, unknown>) => ({ required: true, description, schema });

const eventTypeHeader = (type: string) => ({
  in: 'header',
  name: 'webhook-event-type',
  ...header(`The type of the change: \`${type}\`.`, { const: type }),
});

/** plant.updated and plant.deleted: sent only when WEBHOOK_EVENTS names them, with the common headers. */
function changeWebhook(kind: 'updated' | 'deleted', common: unknown[]): Record<string, unknown> {
  const data =
    kind === 'updated'
      ? { $ref: '#/components/schemas/StoredPlant' }
      : { type: 'object', properties: { id: { type: 'integer', format: 'int64' } }, required: ['id'], additionalProperties: false };
  return {
    post: {
      operationId: kind === 'updated' ? 'plantUpdatedWebhook' : 'plantDeletedWebhook',
      summary: kind === 'updated' ? 'A plant was edited (PATCH); only when WEBHOOK_EVENTS names plant.updated.' : 'A plant was deleted; only when WEBHOOK_EVENTS names plant.deleted.',
      description:
        `Sent once per applied ${kind === 'updated' ? 'edit' : 'delete'} (never for a 412 or a 404), from the change's own transaction, at least once and not in order; ` +
        'deduplicate on webhook-id. The body is a Standard Webhooks envelope, so the signature covers the type.',
      security: [],
      parameters: [...common, eventTypeHeader(`plant.${kind}`)],
      requestBody: {
        required: true,
        description: kind === 'updated' ? 'The type and the plant as stored after the edit; the id exact, also past 2^53.' : 'The type and the id of the deleted plant.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { type: { const: `plant.${kind}` }, data },
              required: ['type', 'data'],
            },
          },
        },
      },
      responses: {
        '200': { description: 'Received. Any 2xx within WEBHOOK_TIMEOUT_MS counts as delivered; anything else is retried.' },
      },
    },
  };
}

/** The OpenAPI 3.1 `webhooks` entry of the published contract: what a subscriber receives and must answer. */
export function newPlantWebhookDocument(): Record<string, unknown> {
  const common: unknown[] = [];
  const document = {
    '/plant/webhook': {
      post: {
        operationId: 'newPlantWebhook',
        summary: 'Information about a new plant added to the store, sent to each configured subscriber.',
        description:
          'Sent once per created plant (not for an identical retry or a conflict), at least once and not in order; ' +
          'deduplicate on webhook-id. Verify with any Standard Webhooks library and the shared secret.',
        security: [],
        parameters: [
          eventTypeHeader('plant.created'),
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
        ],
        requestBody: {
          required: true,
          description: 'The NewPlant as created; the id is a JSON integer written exactly, also past 2^53.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
        },
        responses: {
          '200': { description: 'Received. Any 2xx within WEBHOOK_TIMEOUT_MS counts as delivered; anything else is retried.' },
        },
      },
    },
  };
  const created = document['/plant/webhook'].post.parameters;
  common.push(...created.slice(1));
  return { ...document, 'plant.updated': changeWebhook('updated', common), 'plant.deleted': changeWebhook('deleted', common) };
}
