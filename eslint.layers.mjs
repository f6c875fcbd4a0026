// The import rules of docs/architecture.md, as data: eslint.config.mjs turns them into no-restricted-paths zones,
// and tests/unit/layers.test.ts checks the document's table against them.

/**
 * The ground floor: imported by everyone, imports nothing of the service but itself. openapi-responses.ts is here
 * so each resource can write its OpenAPI paths beside its routes (src/plants/plant.openapi.ts); observers.ts so a
 * resource reports to metrics without either importing the other; change-outbox.ts so a resource's repository and
 * the webhook outbox share a port without importing each other; json-text.ts so a resource's feed and the webhook
 * delivery escape the same line separators; transfer.ts so a resource's export and import and src/backup share what
 * they hand each other; tenant.ts so auth, resources and stores name a tenant's key with one type.
 */
export const GROUND = [
  'src/config',
  'src/errors.ts',
  'src/error.schemas.ts',
  'src/logger.ts',
  'src/lifecycle.ts',
  'src/tracing.ts',
  'src/request-locals.ts',
  'src/observers.ts',
  'src/openapi-responses.ts',
  'src/change-outbox.ts',
  'src/json-text.ts',
  'src/transfer.ts',
  'src/tenant.ts',
];

/** Each room and the rooms it may import besides itself and the ground; everything else in src/ is refused. */
export const LAYERS = {
  // Process glue server.ts loads first: SIGHUP's listener and the Node version check; they import only the ground.
  'src/hangup.ts': [],
  'src/node-version.ts': [],
  'src/db': [],
  // The supervisor of WORKERS > 1 and a worker's side of it: process glue that must not load the service; it serves
  // the workers' merged metrics with the metrics listener.
  'src/supervisor': ['src/metrics'],
  'src/auth': [],
  'src/docs': [],
  'src/http': ['src/auth'],
  'src/resource.ts': ['src/auth', 'src/db'],
  'src/plants': ['src/db', 'src/http', 'src/resource.ts'],
  'src/webhooks': ['src/db', 'src/resource.ts'],
  'src/store': ['src/db', 'src/resource.ts', 'src/webhooks'],
  'src/metrics': ['src/backup', 'src/webhooks'],
  'src/backup': ['src/db'],
  'src/cli': ['src/backup', 'src/db', 'src/node-version.ts', 'src/plants'],
  'src/openapi.ts': ['src/resource.ts', 'src/webhooks'],
  'src/app.ts': ['src/auth', 'src/docs', 'src/http', 'src/metrics', 'src/openapi.ts', 'src/resource.ts'],
  'src/resources.ts': ['src/auth', 'src/plants', 'src/resource.ts', 'src/webhooks'],
  'src/service.ts': ['src/app.ts', 'src/auth', 'src/backup', 'src/http', 'src/metrics', 'src/resource.ts', 'src/resources.ts', 'src/store'],
  'src/token.cli.ts': ['src/auth', 'src/resources.ts'],
  'src/server.ts': ['src/hangup.ts', 'src/node-version.ts', 'src/service.ts', 'src/supervisor'],
};

const ROOMS = Object.keys(LAYERS);

export const layerZones = [
  { target: GROUND, from: ROOMS, message: 'The ground floor imports nothing above it (docs/architecture.md).' },
  ...Object.entries(LAYERS).map(([room, allowed]) => ({
    target: room,
    from: ROOMS.filter((other) => other !== room && !allowed.includes(other)),
    message: `${room} may import only ${[...allowed, 'the ground floor'].join(', ')} (docs/architecture.md).`,
  })),
];
