#!/usr/bin/env bash
# Starts the tree scripts/build-image.sh made as the image starts it, and probes it (CI runs this right
# after the build, .ci/run):
#
#   scripts/image-smoke.sh <built tree>
#
# - no devDependency in its node_modules that no production dependency needs;
# - `node dist/src/server.js` from the tree (not npm, nothing built), NODE_ENV=production, as a user that
#   is not root (nobody, when this runs as root; the image runs as node), on a new PostgreSQL database
#   (SMOKE_POSTGRES_URL's server, the local one by default), importing the test copy of the municipality
#   list; the tree is read-only to it but data/, as in the image;
# - /livez and /readyz answer 200 (readiness: the database and every migration), the list is served,
#   the admin CLI runs from the tree, and SIGTERM ends the server with exit code 0.
set -euo pipefail
tree="$(cd "${1:?usage: scripts/image-smoke.sh <built tree>}" && pwd)"
repo="$(cd "$(dirname "$0")/.." && pwd)"
server_url="${SMOKE_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
database="palanque_image_smoke_$$"
work="$(mktemp -d)"
pid=""
cleanup() {
  [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
  psql -q "$server_url" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "image-smoke: $*" >&2; [ ! -f "$work/server.log" ] || tail -n 40 "$work/server.log" >&2; exit 1; }

echo "== image-smoke: no dev dependency in $tree/node_modules"
node - "$tree" <<'CHECK'
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const tree = process.argv[2];
const lock = JSON.parse(readFileSync(join(tree, 'package-lock.json'), 'utf8'));
const devDependencies = Object.keys(JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')).devDependencies ?? {});
const stray = devDependencies.filter((name) => {
  const entry = lock.packages[`node_modules/${name}`];
  return existsSync(join(tree, 'node_modules', name)) && (!entry || entry.dev || entry.devOptional);
});
for (const [path, entry] of Object.entries(lock.packages)) if (path.startsWith('node_modules/') && entry.dev && existsSync(join(tree, path))) stray.push(path);
if (stray.length) { console.error(`dev dependencies in the built tree: ${stray.join(' ')}`); process.exit(1); }
if (!existsSync(join(tree, 'dist/src/server.js'))) { console.error('no dist/src/server.js in the built tree'); process.exit(1); }
CHECK

# As the image: root's files, read-only to the server, which writes only data/.
run_as=()
if [ "$(id -u)" -eq 0 ]; then
  run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
  chmod 755 "$tree" "$work"
  chown 65534:65534 "$tree/data"
fi
cp "$repo/test/fixtures/municipios-brasileiros/municipios.csv" "$work/municipios.csv"
chmod 644 "$work/municipios.csv"
psql -q "$server_url" -c "CREATE DATABASE $database" >/dev/null
database_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.toString())' "$server_url" "$database")"
port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
secrets_key="$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("base64"))')"

echo "== image-smoke: node dist/src/server.js as $(${run_as[@]+"${run_as[@]}"} id -un) on port $port"
(
  cd "$tree"
  exec ${run_as[@]+"${run_as[@]}"} env -i PATH="$PATH" NODE_ENV=production MALLOC_ARENA_MAX=2 HOST=127.0.0.1 PORT="$port" \
    DATABASE_URL="$database_url" SECRETS_KEY="$secrets_key" PUBLIC_URL="http://127.0.0.1:$port" \
    MUNICIPIOS_SOURCE="$work/municipios.csv" LOG_LEVEL=info \
    node --max-semi-space-size=8 dist/src/server.js
) >"$work/server.log" 2>&1 &
pid=$!

started=$SECONDS
until curl -fsS -o /dev/null "http://127.0.0.1:$port/livez" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || fail "the server exited before answering /livez"
  [ $((SECONDS - started)) -lt 180 ] || fail "no /livez within 180 s"
  sleep 0.5
done
echo "/livez: $(curl -fsS "http://127.0.0.1:$port/livez") after $((SECONDS - started)) s"
readyz="$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/readyz")"
echo "/readyz: $readyz"
[ "${readyz##* }" = 200 ] || fail "/readyz did not answer 200"
list="$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/municipios/?page=186")"
[ "$list" = 200 ] || fail "GET /api/municipios/ answered $list"
grep -q '"step":"started"' "$work/server.log" || fail "no start-up step line"
(cd "$tree" && ${run_as[@]+"${run_as[@]}"} env -i PATH="$PATH" node dist/cli/palanque.js --help >/dev/null) || fail "the admin CLI does not run from the tree"

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=""
[ "$code" -eq 0 ] || fail "exit code $code after SIGTERM"
echo "== image-smoke: passed in $((SECONDS)) s"
