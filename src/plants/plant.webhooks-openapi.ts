/**
 * The plant webhooks of the OpenAPI document: what a subscriber receives for each change type WEBHOOK_EVENTS
 * may name. The delivery's headers and answer come from the webhooks subsystem (`operation`, handed over by
 * src/openapi.ts); this file says what each type carries.
 */
import type { WebhookOperation } from '../resource';

/** plant.updated and plant.deleted: sent only when WEBHOOK_EVENTS names them. */
function changeWebhook(kind: 'updated' | 'deleted', operation: WebhookOperation): Record<string, unknown> {
  const data =
    kind === 'updated'
      ? { $ref: '#/components/schemas/StoredPlant' }
      : { type: 'object', properties: { id: { type: 'integer', format: 'int64' } }, required: ['id'], additionalProperties: false };
  return operation({
    type: `plant.${kind}`,
    operationId: kind === 'updated' ? 'plantUpdatedWebhook' : 'plantDeletedWebhook',
    summary: kind === 'updated' ? 'A plant was edited (PATCH); only when WEBHOOK_EVENTS names plant.updated.' : 'A plant was deleted; only when WEBHOOK_EVENTS names plant.deleted.',
    description:
      `Sent once per applied ${kind === 'updated' ? 'edit' : 'delete'} (never for a 412 or a 404), from the change's own transaction, at least once and not in order; ` +
      'deduplicate on webhook-id. The body is a Standard Webhooks envelope, so the signature covers the type. With tenants on, webhook-tenant names the plant\'s tenant.',
    body: {
      description: kind === 'updated' ? 'The type and the plant as stored after the edit; the id exact, also past 2^53.' : 'The type and the id of the deleted plant.',
      // A Standard Webhooks envelope: the signature covers the type.
      schema: { type: 'object', properties: { type: { const: `plant.${kind}` }, data }, required: ['type', 'data'] },
    },
  });
}

/** The `webhooks` entries of the plant resource: the new-plant body of the contract, then the edit and the delete. */
export function plantWebhooks(operation: WebhookOperation): Record<string, unknown> {
  return {
    '/plant/webhook': operation({
      type: 'plant.created',
      typeFirst: true,
      operationId: 'newPlantWebhook',
      summary: 'Information about a new plant added to the store, sent to each configured subscriber.',
      description:
        'Sent once per created plant (not for an identical retry or a conflict), at least once and not in order; ' +
        'deduplicate on webhook-id. Verify with any Standard Webhooks library and the shared secret. With tenants on, webhook-tenant names the plant\'s tenant.',
      body: {
        description: 'The NewPlant as created; the id is a JSON integer written exactly, also past 2^53.',
        schema: { $ref: '#/components/schemas/NewPlant' },
      },
    }),
    'plant.updated': changeWebhook('updated', operation),
    'plant.deleted': changeWebhook('deleted', operation),
  };
}
