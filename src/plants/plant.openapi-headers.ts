/** The headers the plant operations' OpenAPI entries share (plant.openapi.ts, plant.writes-openapi.ts). */

export const noStore = { 'Cache-Control': { description: 'no-store: plants change; no cache may keep them.', schema: { const: 'no-store' } } };

export const etag = {
  ETag: {
    description: 'The plant\'s version as a strong entity tag ("42"): the position of its last change in the change feed. Send it in If-Match to change only that version.',
    schema: { type: 'string', pattern: '^"[0-9]+"$' },
  },
};
export const ifMatch = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'Apply only if the plant\'s current ETag is one of these (strong comparison; `*` or absent: no condition). Otherwise 412 41201 and nothing changes.',
  schema: { type: 'string' },
};

export const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the write safe to retry: 1 to 255 visible ASCII characters (a UUID), new for each new write. Its first success (2xx) is stored for IDEMPOTENCY_TTL (24 h) under the caller and key; the same request again (method, path and body) gets that answer again, byte for byte, with `Idempotent-Replayed: true`, and changes nothing. The same key with another request is a 422 42202; while the first is in progress, a 409 40902 with Retry-After. A failure (4xx, 5xx, 412 included) stores nothing, so the fixed request may reuse the key. A malformed key is a 400 40052.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
};

export const replayed = {
  'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.', schema: { const: 'true' } },
};

/** The errors Idempotency-Key adds to a write. */
export const IDEMPOTENCY_ERRORS = ['invalid_idempotency_key', 'idempotency_key_in_use', 'idempotency_key_reused'] as const;

/** Every plant operation's: an admin acting in a tenant not its own (docs/auth.md, Tenants). */
export const actAsTenant = {
  name: 'Act-As-Tenant',
  in: 'header',
  required: false,
  description:
    'With tenants on (TENANT_CLAIM), the request acts in this tenant instead of the caller\'s own: its name percent-encoded as UTF-8 (1 to 255 characters; a space as %20). Needs the plants:admin scope besides the operation\'s own (else 403 40302); a malformed value is a 400 40061, and with tenants off the header is a 400 40060. The request log line names the tenant acted in.',
  schema: { type: 'string', minLength: 1, pattern: '^[!-~]+$' },
};
