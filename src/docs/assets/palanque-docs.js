// The documentation page's script (served as <base>/docs/palanque-docs.js): renders the API's own
// OpenAPI document with Swagger UI. It is a file rather than an inline script so that the page's
// Content-Security-Policy can refuse every inline script.
//
// It draws one of two views, named by <body data-view>: `operations` (<base>/docs), where the
// contract's introduction is cut to its first paragraphs and a list of the guide's sections, so that
// the operations, their filter and Authorize are on the first screen (the whole introduction is many
// screens long); and `guide` (<base>/docs/guide), the whole introduction alone, its sections
// anchored by the same names the list links to.
(function () {
  'use strict';

  var view = document.body.getAttribute('data-view') === 'guide' ? 'guide' : 'operations';
  // The page is <base>/docs (or <base>/docs/guide), so the API's base (`/` locally, `/v1/` on
  // deployments) is its folder (or its folder's parent) however the server is reached, and the
  // document sits there.
  var apiBase = new URL(view === 'guide' ? '..' : '.', window.location.href);
  var specUrl = new URL('openapi.json', apiBase).href;
  var thisServer = apiBase.href.replace(/\/$/, '');
  var guideUrl = 'docs/guide';

  function showProblem(message) {
    var box = document.getElementById('swagger-ui');
    var paragraph = document.createElement('p');
    paragraph.className = 'palanque-docs-problem';
    paragraph.textContent = message;
    box.replaceChildren(paragraph);
  }

  /** A heading's anchor: its words in lower case, joined by dashes. */
  function anchorOf(heading) {
    return heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '');
  }

  /** The markdown's headings of the given level (`## ` for 2), outside fenced code. */
  function headings(markdown, level) {
    var marker = '#'.repeat(level) + ' ';
    var found = [];
    var fenced = false;
    markdown.split('\n').forEach(function (line) {
      if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
      else if (!fenced && line.indexOf(marker) === 0) found.push(line.slice(marker.length).trim());
    });
    return found;
  }

  /**
   * The introduction on the operations' page: what comes before its first section, then a link to
   * the guide and one to each of its sections.
   */
  function shortIntroduction(description) {
    var firstSection = description.search(/^## /m);
    var opening = (firstSection < 0 ? description : description.slice(0, firstSection)).trim();
    var sections = headings(description, 2).map(function (heading) {
      return '[' + heading.replace(/[[\]]/g, '') + '](' + guideUrl + '#' + anchorOf(heading) + ')';
    });
    return (
      opening +
      '\n\n**[Read the guide](' + guideUrl + ')**: how this API behaves, beyond each operation' +
      (sections.length ? ' (' + sections.join(' · ') + ').' : '.')
    );
  }

  /** Gives the guide's headings their anchors, then goes to the one the address names. */
  function anchorHeadings() {
    var rendered = document.querySelectorAll('.info .description h2, .info .description h3');
    rendered.forEach(function (heading) {
      if (!heading.id) heading.id = anchorOf(heading.textContent || '');
    });
    if (rendered.length && window.location.hash.length > 1) {
      var target = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
      if (target) target.scrollIntoView();
    }
    return rendered.length > 0;
  }

  /** Swagger UI's layout for the guide: the document's info (title, links, description) alone. */
  function guideLayoutPlugin(system) {
    var h = system.React.createElement;
    return {
      components: {
        GuideLayout: function GuideLayout(props) {
          var InfoContainer = props.getComponent('InfoContainer', true);
          return h('div', { className: 'swagger-ui' }, h('div', { className: 'information-container wrapper' }, h(InfoContainer)));
        },
      },
    };
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
      var guide = view === 'guide';
      if (!guide && spec.info && typeof spec.info.description === 'string') {
        spec.info.description = shortIntroduction(spec.info.description);
      }
      window.ui = window.SwaggerUIBundle({
        spec: spec,
        dom_id: '#swagger-ui',
        layout: guide ? 'GuideLayout' : 'BaseLayout',
        presets: [window.SwaggerUIBundle.presets.apis],
        plugins: guide ? [guideLayoutPlugin] : [],
        deepLinking: !guide,
        displayOperationId: true,
        filter: true,
        // No calls to the public validator service: everything stays on this server.
        validatorUrl: null,
        // Never read configuration from the page's address (`?url=...`).
        queryConfigEnabled: false,
        onComplete: guide
          ? function () {
              // The description is rendered by React after the spec loads: wait for it.
              var tries = 0;
              (function anchorWhenRendered() {
                if (!anchorHeadings() && (tries += 1) < 100) window.setTimeout(anchorWhenRendered, 50);
              })();
            }
          : undefined,
      });
    })
    .catch(function (error) {
      showProblem('The API description could not be loaded: ' + error.message);
    });
})();
