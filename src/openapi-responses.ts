/**
 * The responses, headers and parameters the OpenAPI document repeats across operations: each error status with
 * the catalogue's rows for it, the headers that come with them, and a parameter from its zod schema. Built from
 * the catalogue, so the document cannot list a code the service does not answer. On the ground floor, so each
 * resource writes its paths beside its routes (src/plants/plant.openapi.ts) and src/openapi.ts only assembles.
 */
import { z } from 'zod';
import { catalogue, type Reason } from './errors';

export type JsonSchema = Record<string, unknown>;

// Causes only some operations can meet; every other row of a status is documented for every plant operation.
const BODY_ONLY: readonly Reason[] = ['malformed_json', 'body_not_object', 'unsupported_media_type', 'unsupported_charset', 'body_too_large', 'invalid_field', 'id_conflict', 'nesting_too_deep'];
const PARAMETERS_ONLY: readonly Reason[] = ['invalid_parameter', 'plant_not_found'];
// Only the change feed opens streams.
const FEED_ONLY: readonly Reason[] = ['too_many_streams'];

export function errorResponse(status: number, extra: Record<string, unknown> = {}, skip: readonly Reason[] = [...PARAMETERS_ONLY, ...FEED_ONLY]): JsonSchema {
  const rows = Object.entries(catalogue)
    .filter(([reason, row]) => row.status === status && !skip.includes(reason as Reason))
    .map(([, row]) => row);
  return {
    // Descriptions are CommonMark: "<token>" unescaped would be read as an HTML tag and vanish from /docs.
    description: rows.map((row) => `${row.code}: ${row.message.replace(/[<>]/g, (bracket) => `\\${bracket}`)}`).join(' | '),
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

// Node's HTTP parser refuses these before the app runs, for any operation; src/http/http-edges.ts answers them
// in the Error body (headers over 16 KiB, headers or request too slow).
export function parserErrors(skip?: readonly Reason[]): Record<string, JsonSchema> {
  return { '408': errorResponse(408, {}, skip), '431': errorResponse(431, {}, skip) };
}

// The error responses of a read or delete: no body, so none of the body's causes.
export function parameterErrors(scope: 'plants:read' | 'plants:write'): Record<string, JsonSchema> {
  const skip = [...BODY_ONLY, ...FEED_ONLY];
  return {
    '400': errorResponse(400, {}, skip),
    '401': errorResponse(401, { headers: challenge }, skip),
    '403': errorResponse(403, { headers: scopeChallenge(scope) }, skip),
    '404': errorResponse(404, {}, skip),
    '405': errorResponse(405, { headers: { Allow: { schema: { type: 'string' } } } }, skip),
    ...parserErrors(skip),
    '429': errorResponse(429, { headers: retryAfter }, skip),
    '500': errorResponse(500, {}, skip),
    '503': errorResponse(503, { headers: retryAfter }, skip),
  };
}

export const challenge = {
  'WWW-Authenticate': {
    description: 'Bearer realm="plants", with error="invalid_token" when a token was presented (RFC 6750).',
    schema: { type: 'string' },
  },
};

/** The 403 of an operation whose token lacks the scope it needs. */
export function scopeChallenge(scope: 'plants:read' | 'plants:write'): JsonSchema {
  return {
    'WWW-Authenticate': {
      description: `Bearer realm="plants", error="insufficient_scope", scope="${scope}": the scope this operation needs (RFC 6750 §3.1).`,
      schema: { type: 'string' },
    },
  };
}

export const noStore = { 'Cache-Control': { description: 'no-store: plants change; no cache may keep them.', schema: { const: 'no-store' } } };

export const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
};

export const requestId = {
  'X-Request-Id': { description: 'The request id: the client\'s well-formed X-Request-Id, else one generated.', schema: { type: 'string' } },
};

/** A path or query parameter's schema, from the same zod schema the controller parses it with. */
function parameterSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema;
  // The regex that reads the text form says nothing to a client that sends an integer.
  if (json.type === 'integer') delete json.pattern;
  // zod leaves a default out of an input schema (the value may be absent); for a parameter it says what absent means.
  const fallback = schema.meta()?.default;
  return fallback === undefined ? json : { ...json, default: fallback };
}

export function parameter(name: string, where: 'path' | 'query', schema: z.ZodType): JsonSchema {
  const { description, ...rest } = parameterSchema(schema);
  return { name, in: where, required: where === 'path', description, schema: rest };
}
