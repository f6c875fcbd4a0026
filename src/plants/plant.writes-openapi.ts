/**
 * The OpenAPI operations of the plant writes beyond create, edit and delete (PUT /plants/{id}, POST
 * /plants/batch), beside plant.openapi.ts, which places them under their paths.
 */
import { BODY_ERRORS, errorResponses, REQUEST_ERRORS, requestId, type JsonSchema } from '../openapi-responses';
import { etag, ifMatch, noStore } from './plant.openapi-headers';

const ifNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: '`*`: create only; when the id holds a plant, 412 41201 and nothing changes. Any other value is a 400 40012.',
  schema: { type: 'string', const: '*' },
};

const putIfMatch = {
  ...ifMatch,
  description:
    'Replace only if the plant\'s current ETag is one of these (strong comparison); `*`: only if a plant exists. Otherwise, or when the id holds no plant, 412 41201 and nothing changes. Absent: create or replace.',
};

const written = { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } };

/** PUT /plants/{id} */
export function putPlant(): JsonSchema {
  return {
    operationId: 'putPlant',
    summary: 'Create or replace the plant under an id; If-Match or If-None-Match: * make it conditional.',
    description:
      'The body is the whole plant: a tag left out is removed. A created plant is a plant.created event (and webhook), a replaced one a plant.updated; a replacement equal to what is stored writes nothing and keeps its ETag.',
    security: [{ bearerAuth: ['plants:write'] }],
    parameters: [putIfMatch, ifNoneMatch],
    requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/PutPlant' } } } },
    responses: {
      '200': {
        description: 'Replaced (or already equal), committed and fsynced: the plant as written, with its id, and its ETag.',
        headers: { ...requestId, ...noStore, ...etag },
        content: written,
      },
      '201': {
        description: 'Created, committed and fsynced: the plant as written, with its id, its ETag and its Location.',
        headers: {
          ...requestId,
          ...noStore,
          ...etag,
          Location: { description: 'The plant\'s path, /plants/{id}, under the prefix a trusted proxy mounts the service at.', schema: { type: 'string' } },
        },
        content: written,
      },
      ...errorResponses([...BODY_ERRORS, 'invalid_field', 'invalid_parameter', 'not_found', 'precondition_failed', ...REQUEST_ERRORS], 'plants:write'),
    },
  };
}

const id = { type: 'integer', format: 'int64', description: 'The plant\'s id, an exact JSON integer.' };
const tag = (what: string) => ({ type: 'string', description: `As the ${what} header would carry it.` });

/** One operation of a batch, by its `op`. */
const operation = {
  oneOf: [
    { type: 'object', required: ['op', 'plant'], properties: { op: { const: 'create' }, plant: { $ref: '#/components/schemas/NewPlant' } } },
    {
      type: 'object',
      required: ['op', 'id', 'patch'],
      properties: { op: { const: 'update' }, id, patch: { $ref: '#/components/schemas/PlantPatch' }, ifMatch: tag('If-Match') },
    },
    {
      type: 'object',
      required: ['op', 'id', 'plant'],
      properties: { op: { const: 'put' }, id, plant: { $ref: '#/components/schemas/PutPlant' }, ifMatch: tag('If-Match'), ifNoneMatch: { const: '*', description: 'Create only.' } },
    },
    { type: 'object', required: ['op', 'id'], properties: { op: { const: 'delete' }, id, ifMatch: tag('If-Match') } },
  ],
};

const result = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'integer', enum: [200, 201, 204], description: 'The status the operation would have answered alone.' },
    etag: { type: 'string', description: 'The plant\'s ETag after the operation, where it has one ("42").' },
    plant: {
      type: 'object',
      description: 'The body the operation would have answered alone: a create\'s Plant, a put\'s NewPlant, an update\'s StoredPlant (only to a token with plants:read; otherwise status 204 and no plant).',
    },
  },
};

/** POST /plants/batch */
export function batchPlants(): JsonSchema {
  return {
    operationId: 'batchPlants',
    summary: 'Apply up to 1000 creates, updates, puts and deletes all or nothing, in order, in one transaction.',
    description:
      'Each operation is decided against what the ones before it left (a create then an update of the same id works), with the rules and codes it has alone. Either all apply, in one commit, their events in order at consecutive positions, and the answer is 200 with each result; or none does, and the answer is the first failed operation\'s error (its status: 400, 404 or 412) with `operation`, its index, and `fields` naming `operations[i].…` for a field problem. The body limit is BATCH_BODY_LIMIT.',
    security: [{ bearerAuth: ['plants:write'] }],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object', required: ['operations'], properties: { operations: { type: 'array', minItems: 1, maxItems: 1000, items: operation } } },
        },
      },
    },
    responses: {
      '200': {
        description: 'Every operation applied, committed and fsynced together: one result per operation, in order.',
        headers: { ...requestId, ...noStore },
        content: { 'application/json': { schema: { type: 'object', required: ['results'], properties: { results: { type: 'array', items: result } } } } },
      },
      ...errorResponses(
        [...BODY_ERRORS, 'invalid_field', 'invalid_batch', 'too_many_operations', 'id_conflict', 'not_found', 'plant_not_found', 'precondition_failed', ...REQUEST_ERRORS],
        'plants:write',
      ),
    },
  };
}
