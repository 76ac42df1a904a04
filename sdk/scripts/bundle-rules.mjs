// The stateful mock (the `./msw` entry) applies the server's own rules, from the workspace package
// @palanque/rules (packages/rules). That package is not published: the SDK carries its modules in
// dist/rules/, bundled with what they need of libphonenumber-js and @brazilian-utils (esbuild, shared
// code in chunks), and its own modules import them there by a relative path. So the msw entry needs no
// package but msw's own, and the client entry imports none of it: an app that only calls the API
// bundles neither the rules nor libphonenumber's metadata.
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const rules = fileURLToPath(new URL('../../packages/rules/', import.meta.url));
const bundled = join(dist, 'rules');

const modules = readdirSync(join(rules, 'src')).filter((file) => file.endsWith('.ts')).map((file) => file.slice(0, -'.ts'.length));
await build({
  entryPoints: modules.map((name) => join(rules, 'src', `${name}.ts`)),
  outdir: bundled,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  chunkNames: 'shared/[name]-[hash]',
  legalComments: 'eof',
  logLevel: 'warning',
});
// The declarations are tsc's (packages/rules/dist, built before this script by `npm run build`).
for (const name of modules) copyFileSync(join(rules, 'dist', `${name}.d.ts`), join(bundled, `${name}.d.ts`));

/** `@palanque/rules/phones` -> `./rules/phones.js` (relative to the importing file), in code and declarations. */
const SPECIFIER = /(['"])@palanque\/rules\/([a-z-]+)\1/g;
for (const file of filesUnder(dist)) {
  if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(SPECIFIER, (_match, quote, name) => {
    const path = relative(dirname(file), join(bundled, `${name}.js`)).split('\\').join('/');
    return `${quote}${path.startsWith('.') ? path : `./${path}`}${quote}`;
  });
  if (rewritten !== text) writeFileSync(file, rewritten);
}
const IMPORTED = /(['"])(@palanque\/rules\/|libphonenumber-js|@brazilian-utils\/)/;
const left = filesUnder(dist).filter((file) => /\.(js|d\.ts)$/.test(file) && IMPORTED.test(readFileSync(file, 'utf8')));
if (left.length > 0) throw new Error(`bundle-rules: a package the SDK does not depend on is still imported by ${left.join(', ')}`);

function filesUnder(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [join(folder, entry.name)]));
}
