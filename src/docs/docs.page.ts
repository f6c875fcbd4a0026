// Every URL here is relative to the page, so the page works under whatever path prefix a proxy serves it at:
// /docs loads docs/assets/… and openapi.json next to itself.
export const DOCS_PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Plant Store API reference</title>
    <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
    <link rel="stylesheet" href="docs/assets/swagger-ui.css">
  </head>
  <body>
    <div id="docs"><p>Loading the API reference…</p></div>
    <script src="docs/assets/swagger-ui-bundle.js"></script>
    <script src="docs/assets/docs.js"></script>
  </body>
</html>
`;

// A file, not an inline script, so the policy needs no hash or 'unsafe-inline'.
export const DOCS_SCRIPT = `'use strict';
(function () {
  // The service's root as this page sees it: /docs gives /, /some/prefix/docs gives /some/prefix/.
  var root = new URL('.', window.location.href);
  var mount = document.getElementById('docs');
  fetch(new URL('openapi.json', root), { credentials: 'omit' })
    .then(function (response) {
      if (!response.ok) throw new Error('GET openapi.json answered ' + response.status);
      return response.json();
    })
    .then(function (spec) {
      // The document's servers are relative ('/'): resolved against the page's root, try-it calls go through
      // the same proxy prefix the page came through.
      spec.servers = (spec.servers || [{ url: '/' }]).map(function (server) {
        return Object.assign({}, server, { url: new URL(server.url.replace(/^\\//, ''), root).href.replace(/\\/$/, '') });
      });
      window.ui = SwaggerUIBundle({
        spec: spec,
        domNode: mount,
        // The bearer token typed into Authorize lives in this page's memory only: never in localStorage.
        persistAuthorization: false,
        withCredentials: false,
        // No call to validator.swagger.io or any other host.
        validatorUrl: null,
        deepLinking: false,
        queryConfigEnabled: false,
        displayOperationId: true,
        displayRequestDuration: true,
      });
    })
    .catch(function (error) {
      mount.textContent = 'The API reference could not load: ' + error.message;
    });
})();
`;
