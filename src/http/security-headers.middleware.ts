import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's headers, computed once: helmet runs a chain of twelve middleware on every request to set the same
 * static values, so it is run here once against a recorder and the recorded set is applied per request.
 * Only for options without per-request values (no CSP nonces).
 */
export function securityHeaders(options?: Readonly<HelmetOptions>): RequestHandler {
  const recorded = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: string | number) => recorded.set(name, String(value)),
    removeHeader: () => undefined,
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => undefined);
  // Plain arrays and an indexed loop: res.setHeaders(map) makes an entry array per header on every request.
  const names = [...recorded.keys()];
  const values = [...recorded.values()];
  return (_req, res, next) => {
    // helmet also removes X-Powered-By; createApp disables it in Express, so there is none to remove.
    for (let i = 0; i < names.length; i += 1) res.setHeader(names[i] as string, values[i] as string);
    next();
  };
}
