/**
 * The plant operations of the OpenAPI document, beside the routes that serve them (plant.routes.ts): each
 * operation with its parameters, its answers and the errors it can give. src/openapi.ts assembles them with the
 * other paths; it adds each operation's tag.
 */
import { BODY_ERRORS, errorResponses, parameter, REQUEST_ERRORS, requestId, type JsonSchema } from '../openapi-responses';
import { feedQuerySchema, listQueryExtraSchema, listQuerySchema, plantIdParamSchema } from './plant.schemas';
import { actAsTenant, etag, IDEMPOTENCY_ERRORS, idempotencyKey, ifMatch, noStore, replayed } from './plant.openapi-headers';
import { batchPlants, putPlant } from './plant.writes-openapi';

export const PLANTS_TAG = { name: 'plants', description: 'The store of plants; every call needs a bearer token.' };

// The causes each operation can meet besides REQUEST_ERRORS, beside the operation they belong to.
const BY_ID = ['invalid_parameter', 'not_found', 'plant_not_found'] as const;

/** POST /plants */
function addPlant(): JsonSchema {
  return {
    operationId: 'addPlant',
    summary: 'Create a plant; re-sending the identical plant is a safe retry.',
    // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: here, the scope.
    security: [{ bearerAuth: ['plants:write'] }],
    parameters: [idempotencyKey],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
    },
    responses: {
      '200': {
        description: 'The plant as stored (committed to disk), without its id.',
        headers: { ...requestId, ...etag, ...replayed },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } },
      },
      ...errorResponses([...BODY_ERRORS, 'invalid_field', 'id_conflict', 'not_found', ...IDEMPOTENCY_ERRORS, ...REQUEST_ERRORS], 'plants:write'),
    },
  };
}

/** GET /plants */
function listPlants(): JsonSchema {
  return {
    operationId: 'listPlants',
    summary: 'List plants a page at a time: search by name, sort, count, and the feed position to follow from.',
    description:
      'Keyset paging: follow the Link header for the next page (after=<id> for sort id and -id, an opaque cursor for the other sorts), exact under concurrent writes: a plant present throughout comes exactly once. Every answer carries Feed-Position: GET /plants/events?after=<it> with the same q and tag continues exactly after the page, nothing missed and nothing twice.',
    security: [{ bearerAuth: ['plants:read'] }],
    parameters: [
      parameter('limit', 'query', listQuerySchema.shape.limit),
      parameter('q', 'query', listQueryExtraSchema.shape.q),
      parameter('sort', 'query', listQueryExtraSchema.shape.sort),
      parameter('tag', 'query', listQuerySchema.shape.tag),
      parameter('after', 'query', listQuerySchema.shape.after),
      parameter('cursor', 'query', listQueryExtraSchema.shape.cursor),
      {
        name: 'Prefer',
        in: 'header',
        required: false,
        description: 'count=exact (RFC 7240): the answer carries X-Total-Count, every plant matching q and tag. Other preferences are ignored.',
        schema: { type: 'string', example: 'count=exact' },
      },
    ],
    responses: {
      '200': {
        description: 'Up to limit plants matching q and tag, in the sort\'s order, after after or cursor. Unknown query parameters are ignored.',
        headers: {
          ...requestId,
          ...noStore,
          Link: {
            description:
              'Only when more plants follow: <{the request path}?limit=N[&sort=S][&q=Q](&after=ID|&cursor=C)[&tag=T]>; rel="next" (RFC 8288), relative to the URL the request was sent to.',
            schema: { type: 'string', example: '</plants?limit=20&sort=name&q=fern&cursor=eyJzIjoibmFtZSIsInEiOiJmZXJuIiwiayI6WyJib3N0b24gZmVybiIsIkJvc3RvbiBmZXJuIiwiNDIiXX0>; rel="next"' },
          },
          'Feed-Position': {
            description: 'The position of the last change the page reflects, read with its rows; 0 when the store never had a change. GET /plants/events?after=<it> continues there.',
            schema: { type: 'string', pattern: '^(?:0|[1-9][0-9]{0,18})$', example: '1842' },
          },
          'X-Total-Count': {
            description: 'With Prefer: count=exact only: how many plants match q and tag, whatever the page.',
            schema: { type: 'string', pattern: '^(?:0|[1-9][0-9]*)$', example: '1234' },
          },
          'Preference-Applied': { description: 'count=exact when X-Total-Count is sent.', schema: { const: 'count=exact' } },
          Vary: { description: 'Prefer: the answer depends on it.', schema: { const: 'Prefer' } },
        },
        content: {
          'application/json': {
            schema: { type: 'array', items: { $ref: '#/components/schemas/StoredPlant' } },
            example: [
              { id: 42, name: 'Boston fern', tag: 'shade', createdAt: '2026-11-27T09:41:07.250Z', updatedAt: '2026-11-27T09:41:07.250Z' },
              { id: 7, name: 'Maidenhair fern', createdAt: '2026-11-26T16:03:12.004Z', updatedAt: '2026-11-27T08:15:40.918Z' },
            ],
          },
        },
      },
      ...errorResponses([...BY_ID, 'unknown_sort', 'invalid_cursor', 'paging_conflict', ...REQUEST_ERRORS], 'plants:read'),
    },
  };
}

/** GET /plants/{id} */
function showPlantById(): JsonSchema {
  return {
    operationId: 'showPlantById',
    summary: 'Fetch one plant by id.',
    security: [{ bearerAuth: ['plants:read'] }],
    parameters: [
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'Answer 304 without a body when the plant\'s current ETag is among these (weak comparison) or `*`.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'The plant with its id.',
        headers: { ...requestId, ...noStore, ...etag },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/StoredPlant' } } },
      },
      '304': { description: 'The plant is unchanged since the ETag sent in If-None-Match.', headers: { ...requestId, ...etag } },
      ...errorResponses([...BY_ID, ...REQUEST_ERRORS], 'plants:read'),
    },
  };
}

/** PATCH /plants/{id} */
function updatePlant(): JsonSchema {
  return {
    operationId: 'updatePlant',
    summary: 'Change a plant\'s name or tag with a JSON Merge Patch; If-Match makes it conditional.',
    security: [{ bearerAuth: ['plants:write'] }],
    parameters: [ifMatch, idempotencyKey],
    requestBody: {
      required: true,
      content: {
        'application/merge-patch+json': { schema: { $ref: '#/components/schemas/PlantPatch' } },
        'application/json': { schema: { $ref: '#/components/schemas/PlantPatch' } },
      },
    },
    responses: {
      '200': {
        description:
          'The plant as stored after the change, committed and fsynced, with its ETag. A PATCH that changes something is a new version and a plant.updated event; one that leaves the plant as it is ({}, or the stored values) writes nothing and keeps its ETag.',
        headers: { ...requestId, ...noStore, ...etag, ...replayed },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/StoredPlant' } } },
      },
      '204': {
        description: 'As 200, to a token with plants:write but not plants:read: the ETag and no body, since the stored plant holds values the caller did not send.',
        headers: { ...requestId, ...noStore, ...etag, ...replayed },
      },
      ...errorResponses([...BODY_ERRORS, 'invalid_field', ...BY_ID, 'precondition_failed', ...IDEMPOTENCY_ERRORS, ...REQUEST_ERRORS], 'plants:write'),
    },
  };
}

/** DELETE /plants/{id} */
function deletePlant(): JsonSchema {
  return {
    operationId: 'deletePlant',
    summary: 'Delete one plant; its id is free again afterwards.',
    security: [{ bearerAuth: ['plants:write'] }],
    parameters: [ifMatch, idempotencyKey],
    responses: {
      '204': { description: 'Deleted, committed and fsynced.', headers: { ...requestId, ...replayed } },
      ...errorResponses([...BY_ID, 'precondition_failed', ...IDEMPOTENCY_ERRORS, ...REQUEST_ERRORS], 'plants:write'),
    },
  };
}

/** GET /plants/events */
function plantChanges(): JsonSchema {
  return {
    operationId: 'plantChanges',
    summary: 'The change feed: every create, edit and delete as server-sent events, resumable.',
    description:
      'text/event-stream (WHATWG server-sent events). Each change is one event: `event: plant.created`, `plant.updated` or `plant.deleted`; `id:` its position (an integer that only grows; the plant\'s ETag after the change is `"<position>"`); `data:` the plant `{"id","name","tag"?}` with the id as an exact JSON integer, only `{"id"}` for a delete. With `tag` or `q` the stream carries each change of a plant that matched the filter before the change or matches it after: an edit that takes a plant out of the filter comes once, as `plant.updated` with its new state, and a reader drops it (it no longer matches); a plant that never matched never comes. Events stored before the service kept the previous names may come to a `q` stream although the plant never matched (never the other way). The first block is `id: <position>` alone (the position the stream starts after; it sets the reader\'s last event id and dispatches no event), so a reader that reconnects before any change resumes from it; a stream that starts with a reset has the reset\'s id instead. A comment line (`:`) comes every EVENTS_HEARTBEAT (15 s). `event: reset` (data `{"reason":"expired"}` or `{"reason":"unknown_position"}`) comes first when the position asked for was pruned (older than EVENTS_RETENTION) or was never written, or Last-Event-ID is not a position; reload, then keep reading. `event: resume` is the last event of a stream the service ends, its data saying why: `{"reason":"too_slow"}` (the reader fell behind), `{"reason":"token_revoked"}` (the token it was opened with was removed, or no longer grants plants:read), `{"reason":"token_expired"}` (the token\'s exp passed); reconnect with Last-Event-ID, with a token that is valid (the old one meets 401 or 403). Names and tags never hold U+2028, U+2029 or U+0085 raw: they come as JSON escapes. At shutdown the stream just ends: reconnect the same way. Browsers\' EventSource cannot send Authorization: read it with fetch.',
    security: [{ bearerAuth: ['plants:read'] }],
    parameters: [
      parameter('after', 'query', feedQuerySchema.shape.after),
      parameter('tag', 'query', feedQuerySchema.shape.tag),
      parameter('q', 'query', feedQuerySchema.shape.q),
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'The id of the last event received: the stream resumes after it. Wins over `after`. One that is not a position gives a reset.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'The stream, open until the client leaves, the service shuts down, the reader falls behind or the token ends (these two with a last `resume` event).',
        headers: { ...requestId, ...noStore },
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...errorResponses(['invalid_parameter', 'too_many_streams', ...REQUEST_ERRORS], 'plants:read'),
    },
  };
}

/** The paths of the plant resource, in the document's order; Act-As-Tenant is a parameter of each path's every operation. */
export function plantPaths(): Record<string, JsonSchema> {
  return {
    '/plants': { parameters: [actAsTenant], post: addPlant(), get: listPlants() },
    '/plants/{id}': {
      parameters: [parameter('id', 'path', plantIdParamSchema), actAsTenant],
      get: showPlantById(),
      put: putPlant(),
      patch: updatePlant(),
      delete: deletePlant(),
    },
    '/plants/events': { parameters: [actAsTenant], get: plantChanges() },
    '/plants/batch': { parameters: [actAsTenant], post: batchPlants() },
  };
}
