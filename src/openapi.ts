/**
 * The OpenAPI 3.1 document of the whole service. It only assembles: each registered resource gives its paths,
 * schemas and webhooks (src/resource.ts; the plants' beside their routes, src/plants/plant.openapi.ts), the
 * webhooks subsystem how a delivery is documented (src/webhooks/delivery.openapi.ts); the service's own paths are
 * below. The shared responses, headers and parameters, and the errors each operation lists, are in
 * openapi-responses.ts.
 */
import { z } from 'zod';
import { errorSchema, fieldErrorSchema } from './error.schemas';
import { errorResponses, PARSER_ERRORS, type JsonSchema } from './openapi-responses';
import type { Resource } from './resource';
import { webhookOperation } from './webhooks/delivery.openapi';

function componentSchemas(resources: readonly Resource[]): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const schema of [...resources.flatMap((resource) => resource.openapi.schemas), errorSchema, fieldErrorSchema]) {
    registry.add(schema, { id: String(schema.meta()?.id) });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    // The bigint branch of the id has no JSON Schema form; `override` below writes the id's schema whole.
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    override: (ctx) => {
      for (const resource of resources) resource.openapi.override?.(ctx.zodSchema as unknown as z.ZodType, ctx.jsonSchema);
    },
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _schema, $id: _id, ...schema }]) => [id, schema as JsonSchema]),
  );
}

const SERVICE_TAG = { name: 'service', description: 'Health, readiness and this document; no token needed.' };

/**
 * The last pass over the document, so operations added anywhere get a tag without an edit here: their first
 * path segment when it names a tag (a resource's name), otherwise "service". Summaries and operationIds are checked by
 * the lint in tests/api/openapi-lint.test.ts.
 */
// A path item also holds `parameters`, `summary` and the like; only these keys are operations.
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function finish(document: JsonSchema): JsonSchema {
  const known = new Set((document.tags as { name: string }[]).map((tag) => tag.name));
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, JsonSchema>>)) {
    const segment = path.split('/')[1] ?? '';
    for (const [key, operation] of Object.entries(item)) {
      if (HTTP_METHODS.has(key)) operation.tags ??= [known.has(segment) ? segment : 'service'];
    }
  }
  return document;
}

/** Liveness, readiness and this document: no token, no body. */
function servicePaths(): Record<string, JsonSchema> {
  return {
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
          ...errorResponses(PARSER_ERRORS),
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
          ...errorResponses([...PARSER_ERRORS, 'store_unavailable', 'shutting_down', 'overloaded', 'auth_unavailable']),
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
          ...errorResponses(PARSER_ERRORS),
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document of the whole service: the published contract plus every status, code and bound we add. */
export function buildOpenApiDocument(resources: readonly Resource[]): JsonSchema {
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
    tags: [...resources.map(({ name, description }) => ({ name, description })), SERVICE_TAG],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            `A JWT access token from the identity provider (AUTH_JWKS_URL), whose \`scope\` or \`scp\` claim grants ${resources.flatMap((resource) => resource.scopes).join(' and/or ')}; or a static token (AUTH_TOKENS, AUTH_TOKENS_FILE) with the scopes its line lists. Each operation lists the scope it needs. With tenants on (TENANT_CLAIM), the credential also names the tenant every operation acts in (the JWT claim TENANT_CLAIM names, or the token line's tenant=): what another tenant stores is absent to it, as if it did not exist (docs/auth.md, Tenants).`,
        },
      },
      schemas: componentSchemas(resources),
    },
    security: [{ bearerAuth: [] }],
    webhooks: Object.assign({}, ...resources.map((resource) => resource.openapi.webhooks?.(webhookOperation) ?? {})) as JsonSchema,
    paths: Object.assign({}, ...resources.map((resource) => resource.openapi.paths()), servicePaths()) as JsonSchema,
  });
}
