/**
 * The registry: the one place a resource is registered. The service, the app, the OpenAPI document, auth and
 * the config check iterate over this list; a new resource is a folder (src/<name>/index.ts exporting its
 * Resource, src/resource.ts) and one entry here. Part of the composition root, with service.ts.
 */
import { checkEventTypes, loadConfig, type Config } from './config';
import type { Access } from './auth';
import { plants } from './plants';
import type { Resource } from './resource';

export const RESOURCES: readonly Resource[] = [plants];

/** The scopes a token may grant, and the one a request needs (src/auth/scopes.ts). */
export function accessOf(resources: readonly Resource[]): Access {
  const [first, ...others] = resources;
  return {
    scopes: resources.flatMap((resource) => resource.scopes),
    // A path another resource serves follows its rule; every other path the first resource's, so a token learns
    // nothing from a 403 or a 404 about paths its scopes do not reach.
    scopeOf: (method, path) => {
      for (const resource of others) if (resource.paths.test(path)) return resource.access[method];
      return first?.access[method];
    },
  };
}

/** The configuration, with WEBHOOK_EVENTS checked against the change types the resources declare. */
export function loadServiceConfig(env: Record<string, string | undefined>, generate?: () => string): Config {
  const config = loadConfig(env, generate);
  checkEventTypes(config, RESOURCES.flatMap((resource) => resource.eventTypes));
  return config;
}

