/**
 * The API reference page (GET /docs): Swagger UI rendered from /openapi.json, its files served from node_modules
 * (no CDN), under its own narrow Content-Security-Policy. It must never need a token to be read, never store the
 * token a reader types in to try a call, and never loosen the policy of any other path.
 */
import path from 'node:path';
import type { IRouter } from 'express';
import { DOCS_PAGE, DOCS_SCRIPT } from './docs.page';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

// The only files served from the package: nothing else in node_modules is reachable by name.
const ASSETS = new Map([
  ['swagger-ui.css', path.join(SWAGGER_UI_DIR, 'swagger-ui.css')],
  ['swagger-ui-bundle.js', path.join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js')],
  ['favicon-32x32.png', path.join(SWAGGER_UI_DIR, 'favicon-32x32.png')],
]);

/**
 * Swagger UI runs without eval and without inline script or <style> elements: every script and style sheet is a
 * file of ours ('self'). Its React styles are set through the DOM (CSSOM), which style-src does not govern; its
 * icons are data: images. It talks to this origin only, and nothing may frame it.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CACHE = 'public, max-age=3600';

export function docsRoutes(app: IRouter): void {
  app.get('/docs', (req, res) => {
    // /docs/ would make the page's relative links resolve one level too deep; a relative redirect keeps any
    // prefix a proxy put in front.
    if (req.originalUrl.split('?')[0]?.endsWith('/')) {
      res.redirect(301, '../docs');
      return;
    }
    res.set({ 'Content-Security-Policy': DOCS_CSP, 'Cache-Control': 'no-cache' }).type('html').send(DOCS_PAGE);
  });
  app.get('/docs/assets/docs.js', (_req, res) => {
    res.set('Cache-Control', CACHE).type('js').send(DOCS_SCRIPT);
  });
  app.get('/docs/assets/:file', (req, res, next) => {
    const file = ASSETS.get(String(req.params.file));
    if (file === undefined) {
      next();
      return;
    }
    res.sendFile(file, { headers: { 'Cache-Control': CACHE } });
  });
}
