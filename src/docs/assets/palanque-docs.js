// The documentation page's script (served as <base>/docs/palanque-docs.js): renders the API's own
// OpenAPI document with Swagger UI. It is a file rather than an inline script so that the page's
// Content-Security-Policy can refuse every inline script.
(function () {
  'use strict';

  // The page is <base>/docs, so its folder is the API's base (`/` locally, `/v1/` on deployments)
  // however the server is reached, and the document sits next to the page.
  var apiBase = new URL('.', window.location.href);
  var specUrl = new URL('openapi.json', apiBase).href;
  var thisServer = apiBase.href.replace(/\/$/, '');

  function showProblem(message) {
    var box = document.getElementById('swagger-ui');
    var paragraph = document.createElement('p');
    paragraph.className = 'palanque-docs-problem';
    paragraph.textContent = message;
    box.replaceChildren(paragraph);
  }

  fetch(specUrl, { headers: { Accept: 'application/json' } })
    .then(function (response) {
      if (!response.ok) throw new Error(specUrl + ' answered ' + response.status + '.');
      return response.json();
    })
    .then(function (spec) {
      // "Try it out" talks to the server that served this page: it comes first among the servers.
      var others = (spec.servers || []).filter(function (server) {
        return server.url !== thisServer;
      });
      spec.servers = [{ url: thisServer, description: 'This server (the one serving this page).' }].concat(others);
      window.ui = window.SwaggerUIBundle({
        spec: spec,
        dom_id: '#swagger-ui',
        layout: 'BaseLayout',
        presets: [window.SwaggerUIBundle.presets.apis],
        deepLinking: true,
        displayOperationId: true,
        filter: true,
        // No calls to the public validator service: everything stays on this server.
        validatorUrl: null,
        // Never read configuration from the page's address (`?url=...`).
        queryConfigEnabled: false,
      });
    })
    .catch(function (error) {
      showProblem('The API description could not be loaded: ' + error.message);
    });
})();
