// The stateful mock (the `./msw` entry) applies the server's own rules, from the workspace package
// @palanque/rules (packages/rules). That package is not published: the SDK carries its built modules in
// dist/rules/ and its modules import them there, by a relative path. The client entry imports none of
// them, so an app that only calls the API bundles none (nor libphonenumber's metadata, which the phone
// rules need: an optional peer dependency, like msw).
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const rulesDist = fileURLToPath(new URL('../../packages/rules/dist/', import.meta.url));
const bundled = join(dist, 'rules');

mkdirSync(bundled, { recursive: true });
for (const file of readdirSync(rulesDist)) {
  if (file.endsWith('.js') || file.endsWith('.d.ts')) copyFileSync(join(rulesDist, file), join(bundled, file));
}

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
const left = filesUnder(dist).filter((file) => /\.(js|d\.ts)$/.test(file) && /(['"])@palanque\/rules\//.test(readFileSync(file, 'utf8')));
if (left.length > 0) throw new Error(`bundle-rules: @palanque/rules is still imported by ${left.join(', ')}`);

function filesUnder(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [join(folder, entry.name)]));
}
