/**
 * The OpenAPI operations of the plant writes beyond create, edit and delete (PUT /plants/{id}), beside
 * plant.openapi.ts, which places them under their paths.
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
