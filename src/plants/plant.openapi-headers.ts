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
