/**
 * The layers of src/ (src/README.md, "Layers") and no import circles, checked by `npm run lint:deps`
 * (part of `npm test`). Type-only imports count (`tsPreCompilationDeps`): the point is layering, not
 * run-time loading, and a circle that closes through `import type` is still two files that cannot be
 * understood apart. dependency-cruiser rather than madge: madge finds circles only, while the layer rules
 * below (which folder may import which) are what keeps new circles from forming.
 *
 * Layers, lowest first; a file may import its own layer and those below it:
 *   foundation    the plumbing every domain calls into (http, db, jobs, security, tracing, mail, docs, logger...)
 *   domains       src/<domain>/: each with its models, store, rules, handlers and settings (settings.ts)
 *   configuration config.ts: composes the domains' settings
 *   assembly      domains.ts, app.ts, serve.ts, server.ts: the domains and the HTTP app put together
 *   modes         sandbox/, hybrid/, demo/: the server run another way, with the demo data
 * Entry points (`*-cli.ts`, `main.ts`, server.ts) may import any layer: nothing imports them.
 * simulators/ stands apart: it imports nothing else of src/ (only the modes and the tests use it).
 */
const FOUNDATION =
  '^src/(http|db|jobs|security|tracing|mail|docs)/|^src/(logger|log-redaction|project-root|brasilia-time|script-args|startup-steps|lifecycle|web-address|env-values)[.]ts$';
const DOMAINS = '^src/(accounts|entities|messaging|monitors|municipalities|elections|strategy|chat|oauth|socialnet|notifications|push|webhooks|research|news|control)/';
const CONFIGURATION = '^src/config[.]ts$';
const ASSEMBLY = '^src/(domains|app|serve|server)[.]ts$';
const MODES = '^src/(sandbox|hybrid|demo)/';
const ENTRY_POINTS = '-cli[.]ts$|/main[.]ts$|^src/server[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle (type-only imports included): move what both files need into the lower one.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'foundation-above',
      severity: 'error',
      comment: 'The foundation imports no domain, no configuration, no assembly and no mode.',
      from: { path: FOUNDATION, pathNot: ENTRY_POINTS },
      to: { path: [DOMAINS, CONFIGURATION, ASSEMBLY, MODES] },
    },
    {
      name: 'domains-above',
      severity: 'error',
      comment: 'A domain takes its settings as arguments (its settings.ts says what they are): it imports no configuration, assembly or mode.',
      from: { path: DOMAINS, pathNot: ENTRY_POINTS },
      to: { path: [CONFIGURATION, ASSEMBLY, MODES] },
    },
    {
      name: 'configuration-above',
      severity: 'error',
      comment: 'The configuration composes the domains\' settings; it imports no assembly and no mode.',
      from: { path: CONFIGURATION },
      to: { path: [ASSEMBLY, MODES] },
    },
    {
      name: 'assembly-modes',
      severity: 'error',
      comment: 'The modes plug into the server from outside (StartOptions, AppDependencies): the assembly imports none of them.',
      from: { path: ASSEMBLY, pathNot: ENTRY_POINTS },
      to: { path: MODES },
    },
    {
      name: 'simulators-apart',
      severity: 'error',
      comment: 'The simulators are the outside world, written from the providers\' documentation: they import nothing else of src/, and only the modes use them.',
      from: { path: '^src/simulators/' },
      to: { path: '^src/', pathNot: '^src/simulators/' },
    },
    {
      name: 'simulators-from-modes-only',
      severity: 'error',
      from: { path: '^src/', pathNot: [MODES, '^src/simulators/'] },
      to: { path: '^src/simulators/' },
    },
    {
      name: 'src-not-tools',
      severity: 'error',
      comment: 'The server imports neither the CLI nor the tests.',
      from: { path: '^src/' },
      to: { path: '^(cli|test)/' },
    },
    {
      name: 'src-sdk-schema-only',
      severity: 'error',
      comment: 'From the SDK the server takes the generated schema types only; what it shares with the mock (the rules, how violations become error details) is the workspace package @palanque/rules (packages/rules).',
      from: { path: '^src/' },
      to: { path: '^sdk/', pathNot: '^sdk/schema[.]d[.]ts$' },
    },
    {
      name: 'rules-stand-alone',
      severity: 'error',
      comment: 'packages/rules (@palanque/rules) is pure: the server and the stateful mock import it, it imports neither of them (nor the CLI, nor the tests), only libphonenumber-js and @brazilian-utils.',
      from: { path: '^packages/rules/' },
      to: { path: '^(src|sdk|cli|test)/|^node_modules/(?!libphonenumber-js/|@brazilian-utils/)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^sdk/dist/|^dist/|^packages/[^/]+/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // `development` first: @palanque/rules is read from its sources (packages/rules/src), as tsconfig.json reads it.
      conditionNames: ['development', 'import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
