import type { Express, Request } from 'express';

/** The label for requests no route would take (404s, scanners): one fixed value keeps the series bounded. */
export const UNMATCHED = '(unmatched)';

type RouteLayer = { route?: { path: unknown }; match: (path: string) => false | { pattern?: unknown } };

/**
 * The route template of a request ("/plants/:id"), never its raw path: raw paths are unbounded label values.
 * A routed request carries it in req.route. Requests answered before routing (401, 429, a shed 503) are matched
 * against the app's routes here, so they count under the route they aimed at; new routes need no edit.
 */
export function routeTemplate(app: Express): (req: Request) => string {
  return (req) => {
    const routed = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof routed === 'string') return routed;
    const url = req.originalUrl;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const stack = (app as unknown as { router: { stack: RouteLayer[] } }).router.stack;
    for (const layer of stack) {
      if (layer.route === undefined) continue;
      const match = layer.match(path);
      if (match !== false) return typeof match.pattern === 'string' ? match.pattern : String(layer.route.path);
    }
    return UNMATCHED;
  };
}
