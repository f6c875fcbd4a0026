/**
 * The error catalogue: one row per cause, with its stable int32 code, HTTP status and default message.
 * The table in docs/api.md and the OpenAPI document are checked against it by tests/unit/docs.test.ts.
 */
export const catalogue = {
  malformed_json: { code: 40001, status: 400, message: 'The body is not valid JSON.' },
  body_not_object: { code: 40002, status: 400, message: 'The body must be a JSON object.' },
  unsupported_media_type: { code: 40003, status: 400, message: 'Content-Type must be application/json.' },
  unsupported_charset: { code: 40004, status: 400, message: 'The body must be encoded as UTF-8.' },
  body_too_large: { code: 40005, status: 400, message: 'The body is larger than the service accepts.' },
  invalid_field: { code: 40006, status: 400, message: 'A field breaks its rule.' },
  id_conflict: { code: 40007, status: 400, message: 'id: a plant with this id already exists with another name or tag.' },
  malformed_request: { code: 40008, status: 400, message: 'The request is not valid HTTP/1.1.' },
  nesting_too_deep: { code: 40009, status: 400, message: 'The body nests arrays and objects deeper than 32 levels.' },
  invalid_parameter: { code: 40012, status: 400, message: 'A path or query parameter breaks its rule.' },
  unknown_sort: { code: 40040, status: 400, message: 'sort: must be one of id, -id, name, -name, createdAt, -createdAt, updatedAt, -updatedAt.' },
  invalid_cursor: {
    code: 40041,
    status: 400,
    message: 'cursor: is not one this service made for this query (the same sort, q and tag); follow the Link of the previous page, or start again without cursor.',
  },
  paging_conflict: {
    code: 40042,
    status: 400,
    message: 'after and cursor do not go together, and each goes with its sort: after with sort=id or -id, cursor with the other sorts.',
  },
  invalid_batch: {
    code: 40050,
    status: 400,
    message: 'The body must be {"operations": [...]} with 1 to 1000 operations, each an object whose op is create, update, put or delete.',
  },
  too_many_operations: { code: 40051, status: 400, message: 'A batch holds at most 1000 operations; split it.' },
  invalid_idempotency_key: { code: 40052, status: 400, message: 'Idempotency-Key: must be 1 to 255 visible ASCII characters.' },
  tenants_off: { code: 40060, status: 400, message: 'Act-As-Tenant: this service keeps no tenants (TENANT_CLAIM is unset); send the request without it.' },
  invalid_act_as_tenant: {
    code: 40061,
    status: 400,
    message: 'Act-As-Tenant: must be a tenant\'s name, 1 to 255 characters, percent-encoded as UTF-8 (visible ASCII only, a space as %20).',
  },
  missing_credentials: { code: 40101, status: 401, message: 'Send Authorization: Bearer <token>.' },
  invalid_token: { code: 40102, status: 401, message: 'The bearer token is not valid.' },
  token_expired: { code: 40103, status: 401, message: 'The access token has expired; get a new one from the identity provider.' },
  invalid_tenant_claim: { code: 40104, status: 401, message: 'The access token\'s tenant claim (TENANT_CLAIM) must be a non-empty string of at most 255 characters.' },
  insufficient_scope: { code: 40301, status: 403, message: 'The token lacks the scope this request needs.' },
  act_as_tenant_forbidden: { code: 40302, status: 403, message: 'Act-As-Tenant: acting in another tenant needs the resource\'s admin scope, which this token lacks.' },
  not_found: { code: 40401, status: 404, message: 'There is nothing at this path.' },
  plant_not_found: { code: 40402, status: 404, message: 'No plant has this id.' },
  method_not_allowed: { code: 40501, status: 405, message: 'This method is not allowed on this path.' },
  request_timeout: { code: 40801, status: 408, message: 'The request did not arrive in time; send it again, faster.' },
  idempotency_key_in_use: { code: 40902, status: 409, message: 'Idempotency-Key: a request with this key is still in progress; retry after the number of seconds in Retry-After.' },
  precondition_failed: {
    code: 41201,
    status: 412,
    message: 'The plant has changed since the ETag sent in If-Match; nothing was changed. GET it again and retry with its new ETag.',
  },
  idempotency_key_reused: { code: 42202, status: 422, message: 'Idempotency-Key: this key was used for another request; use a new key for a new request.' },
  rate_limited: { code: 42901, status: 429, message: 'Too many requests; retry after the number of seconds in Retry-After.' },
  tenant_rate_limited: { code: 42902, status: 429, message: 'Too many requests from this tenant, all its callers together; retry after the number of seconds in Retry-After.' },
  headers_too_large: { code: 43101, status: 431, message: 'The request line and headers are larger than the service accepts.' },
  internal: { code: 50001, status: 500, message: 'Something went wrong on our side; the request was not applied.' },
  store_unavailable: { code: 50301, status: 503, message: 'The store cannot take writes now; nothing was written. Retry later.' },
  shutting_down: { code: 50302, status: 503, message: 'The service is shutting down; retry on another instance or later.' },
  overloaded: { code: 50303, status: 503, message: 'The service is over capacity; retry after the number of seconds in Retry-After.' },
  auth_unavailable: {
    code: 50310,
    status: 503,
    message: 'The identity provider\'s signing keys cannot be fetched now, so no access token can be checked; retry later.',
  },
  too_many_streams: { code: 50320, status: 503, message: 'This instance has as many change streams open as it allows; retry after the number of seconds in Retry-After.' },
} as const satisfies Record<string, { code: number; status: number; message: string }>;

export type Reason = keyof typeof catalogue;

/** One problem of field validation, for a form to show beside the field; 40006, 40012 and 40040 to 40042 carry them. */
export type FieldProblem = { field: string; code: string; message: string };

export class AppError extends Error {
  readonly reason: Reason;
  readonly headers: Readonly<Record<string, string>>;
  readonly fields?: readonly FieldProblem[];
  /** A batch's failure: the index of the operation that failed (nothing of the batch was applied). */
  readonly operation?: number;

  constructor(
    reason: Reason,
    message?: string,
    options: { cause?: unknown; headers?: Record<string, string>; fields?: readonly FieldProblem[]; operation?: number } = {},
  ) {
    super(message ?? catalogue[reason].message, { cause: options.cause });
    this.name = 'AppError';
    this.reason = reason;
    this.headers = options.headers ?? {};
    if (options.fields !== undefined) this.fields = options.fields;
    if (options.operation !== undefined) this.operation = options.operation;
  }
}
