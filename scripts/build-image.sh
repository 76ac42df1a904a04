#!/usr/bin/env bash
# The image's build steps, in one place: the Dockerfile's build stage runs this script, and CI runs it
# as is on its clean clone (.ci/run), then starts what it made (scripts/image-smoke.sh).
#
#   scripts/build-image.sh <output directory>
#
# In the tree this script belongs to (the build context, or a clean clone: never a working copy in use,
# since step 1 reinstalls its node_modules):
#   1. npm ci: every dependency, the dev ones included, exactly as package-lock.json says;
#   2. npm run build: the TypeScript build, into dist/;
#   3. the output directory gets what the server reads at run time: package.json and the lockfile,
#      dist/, sdk/openapi.json (the contract it validates against), the shared rules' workspace package
#      built (packages/rules: its package.json and dist/), src/docs/assets/ (the /docs page), and an
#      empty data/ (mail files without SMTP_URL, a SQLite database if one is configured);
#   4. its node_modules are the production dependencies: step 1's install, hard-linked (nothing is
#      downloaded or compiled twice: the SQLite driver compiles from source where its prebuilt binary
#      cannot be downloaded, minutes on a slow machine), then `npm prune --omit=dev`, which removes by
#      the same lockfile what `npm ci --omit=dev` would not install;
#   5. the packages the lockfile marks as needed only by dev dependencies (`dev`), or only as optional
#      peers of the sdk workspace (`devOptional`: msw, typescript), are removed, and the script fails if
#      a devDependency is left that no production dependency needs.
# The server then runs from the output directory as `node dist/src/server.js`.
set -euo pipefail

out="${1:?usage: scripts/build-image.sh <output directory>}"
cd "$(dirname "$0")/.."
mkdir -p "$out"
out="$(cd "$out" && pwd)"
[ -z "$(ls -A "$out")" ] || { echo "build-image: $out is not empty" >&2; exit 1; }

step() { echo "== build-image: $1 (${SECONDS}s)"; }

step "npm ci"
npm ci --no-audit --no-fund

step "npm run build"
rm -rf dist
npm run build

step "assemble $out"
mkdir -p "$out/sdk" "$out/packages/rules" "$out/src/docs" "$out/data"
cp package.json package-lock.json "$out/"
cp sdk/package.json sdk/openapi.json "$out/sdk/"
cp packages/rules/package.json "$out/packages/rules/"
cp -R packages/rules/dist "$out/packages/rules/dist"
cp -R dist "$out/dist"
cp -R src/docs/assets "$out/src/docs/assets"

step "production dependencies"
cp -al node_modules "$out/node_modules"
# npm rewrites its hidden lockfile: never in place through a link into the build's install.
rm -f "$out/node_modules/.package-lock.json"
(cd "$out" && npm prune --omit=dev --no-audit --no-fund)

step "no dev dependency left"
node - "$out" <<'CHECK'
const { existsSync, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const out = process.argv[2];
const lock = JSON.parse(readFileSync(join(out, 'package-lock.json'), 'utf8'));
const removed = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.startsWith('node_modules/') || !(entry.dev || entry.devOptional)) continue;
  if (!existsSync(join(out, path))) continue;
  rmSync(join(out, path), { recursive: true, force: true });
  removed.push(path.slice('node_modules/'.length));
}
// The sdk workspace's link: the server runs the sdk's modules compiled into dist/sdk/. The rules'
// link (@palanque/rules -> packages/rules) stays: the server imports them by that name.
rmSync(join(out, 'node_modules', '@palanque', 'sdk'), { recursive: true, force: true });
if (!existsSync(join(out, 'node_modules', '@palanque', 'rules', 'dist', 'phones.js'))) { console.error('build-image: the shared rules (@palanque/rules) are not in the production tree'); process.exit(1); }
const devDependencies = Object.keys(JSON.parse(readFileSync(join(out, 'package.json'), 'utf8')).devDependencies ?? {});
const left = devDependencies.filter((name) => existsSync(join(out, 'node_modules', name)));
const neededByProduction = left.filter((name) => { const entry = lock.packages[`node_modules/${name}`]; return entry && !entry.dev && !entry.devOptional; });
const stray = left.filter((name) => !neededByProduction.includes(name));
if (removed.length) console.log(`removed, needed only by dev dependencies: ${removed.join(' ')}`);
if (neededByProduction.length) console.log(`devDependencies kept because production dependencies need them: ${neededByProduction.join(' ')}`);
if (stray.length) { console.error(`build-image: dev dependencies left in the production tree: ${stray.join(' ')}`); process.exit(1); }
CHECK
step "done: node dist/src/server.js in $out"
