import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * The request and response classes Node builds for each request: Node's own, with Express's prototypes
 * (`app.request`, `app.response`) already in place. Express sets those prototypes on every request with
 * `Object.setPrototypeOf`, which is then a no-op. Done by Express, the change gives the object a hidden class of
 * its own, and every property added after it another one (V8 shares no transition from a map made by a
 * prototype change): every request paid for new shapes and megamorphic lookups
 * (docs/decisions/performance.md).
 *
 * Function constructors calling Node's, not classes: a subclass would put its own prototype between, and
 * `Reflect.construct` with another `new.target` gives each object a fresh hidden class as well.
 */
export function requestClasses(app: Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  function ExpressRequest(this: http.IncomingMessage, socket: Socket): void {
    http.IncomingMessage.call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: http.ServerOptions): void {
    // Node passes its server options (highWaterMark and the like) as a second argument its types leave out.
    Reflect.apply(http.ServerResponse, this, [req, options]);
  }
  ExpressResponse.prototype = app.response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof http.ServerResponse,
  };
}
