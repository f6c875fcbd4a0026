import { z } from 'zod';
import {
  errorSchema,
  feedQuerySchema,
  fieldErrorSchema,
  listQuerySchema,
  newPlantSchema,
  plantIdParamSchema,
  plantIdSchema,
  plantPatchSchema,
  plantSchema,
  storedPlantSchema,
} from './plants/plant.schemas';
import { challenge, errorResponse, noStore, parameterErrors, parserErrors, retryAfter, scopeChallenge, type JsonSchema } from './openapi-responses';
import { newPlantWebhookDocument } from './webhooks/webhook.openapi';

function componentSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const schema of [newPlantSchema, plantPatchSchema, plantSchema, storedPlantSchema, errorSchema, fieldErrorSchema]) {
    registry.add(schema, { id: String(schema.meta()?.id) });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    // The bigint branch of the id has no JSON Schema form; `override` below writes the id's schema whole.
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    override: (ctx) => {
      // The id reaches zod as number or bigint; on the wire it is a JSON integer.
      if (ctx.zodSchema === plantIdSchema) {
        delete ctx.jsonSchema.anyOf;
        Object.assign(ctx.jsonSchema, { type: 'integer', format: 'int64' });
      }
    },
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _schema, $id: _id, ...schema }]) => [id, schema as JsonSchema]),
  );
}

const TAGS = [
  { name: 'plants', description: 'The store of plants; every call needs a bearer token.' },
  { name: 'service', description: 'Health, readiness and this document; no token needed.' },
];

/**
 * The last pass over the document, so operations added anywhere get a tag without an edit here: their first
 * path segment when it names a tag ("plants"), otherwise "service". Summaries and operationIds are checked by
 * the lint in tests/api/openapi-lint.test.ts.
 */
// A path item also holds `parameters`, `summary` and the like; only these keys are operations.
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function finish(document: JsonSchema): JsonSchema {
  const known = new Set(TAGS.map((tag) => tag.name));
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, JsonSchema>>)) {
    const segment = path.split('/')[1] ?? '';
    for (const [key, operation] of Object.entries(item)) {
      if (HTTP_METHODS.has(key)) operation.tags ??= [known.has(segment) ? segment : 'service'];
    }
  }
  return document;
}

/** A path or query parameter's schema, from the same zod schema the controller parses it with. */
function parameterSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema;
  // The regex that reads the text form says nothing to a client that sends an integer.
  if (json.type === 'integer') delete json.pattern;
  // zod leaves a default out of an input schema (the value may be absent); for a parameter it says what absent means.
  const fallback = schema.meta()?.default;
  return fallback === undefined ? json : { ...json, default: fallback };
}

function parameter(name: string, where: 'path' | 'query', schema: z.ZodType): JsonSchema {
  const { description, ...rest } = parameterSchema(schema);
  return { name, in: where, required: where === 'path', description, schema: rest };
}

const etag = {
  ETag: {
    description: 'The plant\'s version as a strong entity tag ("42"): the position of its last change in the change feed. Send it in If-Match to change only that version.',
    schema: { type: 'string', pattern: '^"[0-9]+"$' },
  },
};
const ifMatch = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'Apply only if the plant\'s current ETag is one of these (strong comparison; `*` or absent: no condition). Otherwise 412 41201 and nothing changes.',
  schema: { type: 'string' },
};
const preconditionFailed = { '412': errorResponse(412) };

/** The OpenAPI 3.1 document of the whole service: the published contract plus every status, code and bound we add. */
export function buildOpenApiDocument(): JsonSchema {
  const requestId = {
    'X-Request-Id': { description: 'The request id: the client\'s well-formed X-Request-Id, else one generated.', schema: { type: 'string' } },
  };
  return finish({
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description: 'Keeps a store of plants. Every error answers the Error body; the codes are listed per status.',
    },
    // Relative, so the document holds wherever a proxy mounts the service (the /docs page resolves it under its prefix).
    servers: [{ url: '/' }],
    tags: TAGS,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A JWT access token from the identity provider (AUTH_JWKS_URL), whose `scope` or `scp` claim grants plants:read and/or plants:write; or a static token (AUTH_TOKENS, AUTH_TOKENS_FILE) with the scopes its line lists. Each operation lists the scope it needs.',
        },
      },
      schemas: componentSchemas(),
    },
    security: [{ bearerAuth: [] }],
    webhooks: newPlantWebhookDocument(),
    paths: {
      '/plants': {
        post: {
          operationId: 'addPlant',
          summary: 'Create a plant; re-sending the identical plant is a safe retry.',
          // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: here, the scope.
          security: [{ bearerAuth: ['plants:write'] }],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
          },
          responses: {
            '200': {
              description: 'The plant as stored (committed to disk), without its id.',
              headers: { ...requestId, ...etag },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } },
            },
            '400': errorResponse(400),
            '401': errorResponse(401, { headers: challenge }),
            '403': errorResponse(403, { headers: scopeChallenge('plants:write') }),
            '404': errorResponse(404),
            '405': errorResponse(405, { headers: { Allow: { schema: { type: 'string' } } } }),
            ...parserErrors(),
            '429': errorResponse(429, { headers: retryAfter }),
            '500': errorResponse(500),
            '503': errorResponse(503, { headers: retryAfter }),
          },
        },
        get: {
          operationId: 'listPlants',
          summary: 'List plants in ascending id, a page at a time (keyset paging with after).',
          security: [{ bearerAuth: ['plants:read'] }],
          parameters: [
            parameter('limit', 'query', listQuerySchema.shape.limit),
            parameter('after', 'query', listQuerySchema.shape.after),
            parameter('tag', 'query', listQuerySchema.shape.tag),
          ],
          responses: {
            '200': {
              description: 'Up to limit plants with ids greater than after, in ascending id. Unknown query parameters are ignored.',
              headers: {
                ...requestId,
                ...noStore,
                Link: {
                  description:
                    'Only when more plants follow: <{the request path}?limit=N&after=ID[&tag=T]>; rel="next" (RFC 8288), relative to the URL the request was sent to.',
                  schema: { type: 'string' },
                },
              },
              content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/StoredPlant' } } } },
            },
            ...parameterErrors('plants:read'),
          },
        },
      },
      '/plants/{id}': {
        parameters: [parameter('id', 'path', plantIdParamSchema)],
        get: {
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
            ...parameterErrors('plants:read'),
          },
        },
        patch: {
          operationId: 'updatePlant',
          summary: 'Change a plant\'s name or tag with a JSON Merge Patch; If-Match makes it conditional.',
          security: [{ bearerAuth: ['plants:write'] }],
          parameters: [ifMatch],
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
              headers: { ...requestId, ...noStore, ...etag },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/StoredPlant' } } },
            },
            '204': {
              description: 'As 200, to a token with plants:write but not plants:read: the ETag and no body, since the stored plant holds values the caller did not send.',
              headers: { ...requestId, ...noStore, ...etag },
            },
            '400': errorResponse(400, {}, ['id_conflict']),
            '401': errorResponse(401, { headers: challenge }, []),
            '403': errorResponse(403, { headers: scopeChallenge('plants:write') }, []),
            '404': errorResponse(404, {}, []),
            '405': errorResponse(405, { headers: { Allow: { schema: { type: 'string' } } } }, []),
            ...parserErrors([]),
            ...preconditionFailed,
            '429': errorResponse(429, { headers: retryAfter }, []),
            '500': errorResponse(500, {}, []),
            '503': errorResponse(503, { headers: retryAfter }, ['too_many_streams']),
          },
        },
        delete: {
          operationId: 'deletePlant',
          summary: 'Delete one plant; its id is free again afterwards.',
          security: [{ bearerAuth: ['plants:write'] }],
          parameters: [ifMatch],
          responses: {
            '204': { description: 'Deleted, committed and fsynced.', headers: requestId },
            ...parameterErrors('plants:write'),
            ...preconditionFailed,
          },
        },
      },
      '/plants/events': {
        get: {
          operationId: 'plantChanges',
          summary: 'The change feed: every create, edit and delete as server-sent events, resumable.',
          description:
            'text/event-stream (WHATWG server-sent events). Each change is one event: `event: plant.created`, `plant.updated` or `plant.deleted`; `id:` its position (an integer that only grows; the plant\'s ETag after the change is `"<position>"`); `data:` the plant `{"id","name","tag"?}` with the id as an exact JSON integer, only `{"id"}` for a delete. The first block is `id: <position>` alone (the position the stream starts after; it sets the reader\'s last event id and dispatches no event), so a reader that reconnects before any change resumes from it; a stream that starts with a reset has the reset\'s id instead. A comment line (`:`) comes every EVENTS_HEARTBEAT (15 s). `event: reset` (data `{"reason":"expired"}` or `{"reason":"unknown_position"}`) comes first when the position asked for was pruned (older than EVENTS_RETENTION) or was never written, or Last-Event-ID is not a position; reload, then keep reading. `event: resume` is the last event of a stream the service ends, its data saying why: `{"reason":"too_slow"}` (the reader fell behind), `{"reason":"token_revoked"}` (the token it was opened with was removed, or no longer grants plants:read), `{"reason":"token_expired"}` (the token\'s exp passed); reconnect with Last-Event-ID, with a token that is valid (the old one meets 401 or 403). Names and tags never hold U+2028, U+2029 or U+0085 raw: they come as JSON escapes. At shutdown the stream just ends: reconnect the same way. Browsers\' EventSource cannot send Authorization: read it with fetch.',
          security: [{ bearerAuth: ['plants:read'] }],
          parameters: [
            parameter('after', 'query', feedQuerySchema.shape.after),
            parameter('tag', 'query', feedQuerySchema.shape.tag),
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
            '400': errorResponse(400, {}, ['malformed_json', 'body_not_object', 'unsupported_media_type', 'unsupported_charset', 'body_too_large', 'invalid_field', 'id_conflict', 'nesting_too_deep']),
            '401': errorResponse(401, { headers: challenge }, []),
            '403': errorResponse(403, { headers: scopeChallenge('plants:read') }, []),
            '405': errorResponse(405, { headers: { Allow: { schema: { type: 'string' } } } }, []),
            ...parserErrors([]),
            '429': errorResponse(429, { headers: retryAfter }, []),
            '500': errorResponse(500, {}, []),
            '503': errorResponse(503, { headers: retryAfter }, []),
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'liveness',
          summary: 'Liveness: the process answers.',
          security: [],
          responses: {
            '200': {
              description: 'The process is up.',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } } },
            },
            ...parserErrors(),
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          summary: 'Readiness: the store is reachable and migrated, and the process is not draining.',
          security: [],
          responses: {
            '200': {
              description: 'The store is reachable and migrated.',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' } }, required: ['status'] } } },
            },
            ...parserErrors(),
            '503': errorResponse(503, { headers: retryAfter }),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This OpenAPI document.',
          security: [],
          responses: {
            '200': { description: 'This document.', content: { 'application/json': { schema: { type: 'object' } } } },
            ...parserErrors(),
          },
        },
      },
    },
  });
}
