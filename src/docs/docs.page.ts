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

  // JSON text laid out as JSON.stringify(value, null, 2) would, without reading any number: Swagger UI's own
  // response view parses and re-prints, which turns plant 9007199254740993 into 9007199254740992.
  function indentJson(text) {
    var out = '';
    var depth = 0;
    var i = 0;
    var pad = function (n) { return '\\n' + new Array(n + 1).join('  '); };
    while (i < text.length) {
      var c = text[i];
      if (c === '"') {
        var end = i + 1;
        while (text[end] !== '"') end += text[end] === '\\\\' ? 2 : 1;
        out += text.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (c === '{' || c === '[') {
        var j = i + 1;
        while (/\\s/.test(text[j] || '')) j += 1;
        if (text[j] === (c === '{' ? '}' : ']')) {
          out += c + text[j];
          i = j + 1;
          continue;
        }
        depth += 1;
        out += c + pad(depth);
      } else if (c === '}' || c === ']') {
        depth -= 1;
        out += pad(depth) + c;
      } else if (c === ',') {
        out += ',' + pad(depth);
      } else if (c === ':') {
        out += ': ';
      } else if (!/\\s/.test(c)) {
        out += c;
      }
      i += 1;
    }
    return out;
  }

  // A Swagger UI plugin: JSON response bodies shown from their text, digit for digit.
  function ExactJsonPlugin() {
    return {
      wrapComponents: {
        responseBody: function (Original, system) {
          return function (props) {
            var React = system.React;
            var json = /json/i.test(props.contentType || '') && typeof props.content === 'string';
            try {
              if (json) JSON.parse(props.content);
            } catch (error) {
              json = false;
            }
            if (!json) return React.createElement(Original, props);
            var HighlightCode = props.getComponent('HighlightCode', true);
            return React.createElement('div', null,
              React.createElement('h5', null, 'Response body'),
              React.createElement(HighlightCode, { language: 'json', downloadable: true, fileName: 'response.json', canCopy: true }, indentJson(props.content)));
          };
        },
      },
    };
  }
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
        plugins: [ExactJsonPlugin],
      });
    })
    .catch(function (error) {
      mount.textContent = 'The API reference could not load: ' + error.message;
    });
})();
`;
