/**
 * The responses, headers and parameters the OpenAPI document repeats across operations: each error status with
 * the catalogue's rows for it, the headers that come with them, and a parameter from its zod schema. Each
 * operation lists the causes it can meet beside its route; the responses are built from the catalogue, so the
 * document cannot list a code the service does not answer. On the ground floor, so each resource writes its
 * paths beside its routes (src/plants/plant.openapi.ts) and src/openapi.ts only assembles.
 */
import { z } from 'zod';
import { catalogue, type Reason } from './errors';

export type JsonSchema = Record<string, unknown>;

/** What every operation behind the token can answer, whatever its resource: the edges, auth, limits, failures. */
export const REQUEST_ERRORS: readonly Reason[] = [
  'malformed_request',
  'missing_credentials',
  'invalid_token',
  'token_expired',
  'invalid_tenant_claim',
  'insufficient_scope',
  'act_as_tenant_forbidden',
  'tenants_off',
  'invalid_act_as_tenant',
  'method_not_allowed',
  'request_timeout',
  'rate_limited',
  'tenant_rate_limited',
  'headers_too_large',
  'internal',
  'store_unavailable',
  'shutting_down',
  'overloaded',
  'auth_unavailable',
];

/** What the JSON body parser refuses (src/http/json-body.middleware.ts): only operations that read a body. */
export const BODY_ERRORS: readonly Reason[] = ['malformed_json', 'body_not_object', 'unsupported_media_type', 'unsupported_charset', 'body_too_large', 'nesting_too_deep'];

// Node's HTTP parser refuses these before the app runs, for any operation; src/http/http-edges.ts answers them
// in the Error body (headers over 16 KiB, headers or request too slow).
export const PARSER_ERRORS: readonly Reason[] = ['request_timeout', 'headers_too_large'];

function errorResponse(status: number, rows: readonly { code: number; message: string }[], extra: Record<string, unknown>): JsonSchema {
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

/** The headers that come with an error status: the challenges, Allow, Retry-After. */
function headersOf(status: number, scope: string | undefined): Record<string, unknown> {
  if (status === 401) return { headers: challenge };
  if (status === 403 && scope !== undefined) return { headers: scopeChallenge(scope) };
  if (status === 405) return { headers: { Allow: { schema: { type: 'string' } } } };
  if (status === 429 || status === 503) return { headers: retryAfter };
  return {};
}

/**
 * The error responses of an operation from the causes it lists, one response per status with its rows in the
 * catalogue's order. `scope`: the one the operation needs, named in its 403's challenge.
 */
export function errorResponses(reasons: readonly Reason[], scope?: string): Record<string, JsonSchema> {
  const byStatus = new Map<number, { code: number; message: string }[]>();
  for (const [reason, row] of Object.entries(catalogue)) {
    if (!reasons.includes(reason as Reason)) continue;
    const rows = byStatus.get(row.status) ?? [];
    rows.push(row);
    byStatus.set(row.status, rows);
  }
  return Object.fromEntries([...byStatus].map(([status, rows]) => [String(status), errorResponse(status, rows, headersOf(status, scope))]));
}

const challenge = {
  'WWW-Authenticate': {
    description: 'Bearer realm="plants", with error="invalid_token" when a token was presented (RFC 6750).',
    schema: { type: 'string' },
  },
};

/** The 403 of an operation whose token lacks the scope it needs. */
function scopeChallenge(scope: string): JsonSchema {
  return {
    'WWW-Authenticate': {
      description: `Bearer realm="plants", error="insufficient_scope", scope="${scope}": the scope this operation needs (RFC 6750 §3.1); for 40302, the resource's admin scope Act-As-Tenant needs.`,
      schema: { type: 'string' },
    },
  };
}

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
