import { z } from 'zod';
import { catalogue } from './errors';
import { errorSchema, newPlantSchema, plantIdSchema, plantSchema } from './plants/plant.schemas';

type JsonSchema = Record<string, unknown>;

function componentSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const schema of [newPlantSchema, plantSchema, errorSchema]) {
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

function errorResponse(status: number, extra: Record<string, unknown> = {}): JsonSchema {
  const rows = Object.values(catalogue).filter((row) => row.status === status);
  return {
    description: rows.map((row) => `${row.code}: ${row.message}`).join(' | '),
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Error' },
            { properties: { error: { enum: rows.map((row) => row.code) } } },
          ],
        },
      },
    },
    ...extra,
  };
}

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
};

/** The OpenAPI 3.1 document of the whole service: the published contract plus every status, code and bound we add. */
export function buildOpenApiDocument(): JsonSchema {
  const requestId = {
    'X-Request-Id': { description: 'The request id: the client\'s well-formed X-Request-Id, else one generated.', schema: { type: 'string' } },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description: 'Keeps a store of plants. Every error answers the Error body; the codes are listed per status.',
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: componentSchemas(),
    },
    security: [{ bearerAuth: [] }],
    paths: {
      '/plants': {
        post: {
          operationId: 'addPlant',
          summary: 'Create a plant; re-sending the identical plant is a safe retry.',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
          },
          responses: {
            '200': {
              description: 'The plant as stored (committed to disk), without its id.',
              headers: requestId,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } },
            },
            '400': errorResponse(400),
            '401': errorResponse(401, {
              headers: {
                'WWW-Authenticate': {
                  description: 'Bearer realm="plants", with error="invalid_token" when a token was presented (RFC 6750).',
                  schema: { type: 'string' },
                },
              },
            }),
            '404': errorResponse(404),
            '405': errorResponse(405, { headers: { Allow: { schema: { type: 'string' } } } }),
            '408': errorResponse(408),
            '429': errorResponse(429, { headers: retryAfter }),
            '431': errorResponse(431),
            '500': errorResponse(500),
            '503': errorResponse(503, { headers: retryAfter }),
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'liveness',
          security: [],
          responses: {
            '200': {
              description: 'The process is up.',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } } },
            },
          },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          security: [],
          responses: {
            '200': {
              description: 'The store is reachable and migrated.',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' } }, required: ['status'] } } },
            },
            '503': errorResponse(503, { headers: retryAfter }),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          security: [],
          responses: { '200': { description: 'This document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
  };
}
