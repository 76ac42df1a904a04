# syntax=docker/dockerfile:1
# Palanque's image. The build steps are scripts/build-image.sh's, which CI runs as is (.ci/run), then
# starts what it made as this image does (scripts/image-smoke.sh); test/image.test.ts holds this file to
# them. docs/operations.md ("Containers") says how to run it; compose.yaml runs it with its roles.

# Build: every dependency (the TypeScript build needs the dev ones) and the compilers the SQLite driver
# falls back to when its prebuilt binary cannot be downloaded. The script leaves in /app the production
# tree: package files, dist/, the contract, the docs page's assets, production node_modules only.
FROM node:20-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.npm bash scripts/build-image.sh /app

# Runtime: node and the production tree; no compiler, no npm, no dev dependency.
FROM node:20-bookworm-slim AS runtime
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-v*
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000 MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app /app
# The only place the server writes: mail files without SMTP_URL, a SQLite database if one is configured.
RUN chown node:node /app/data
USER node
EXPOSE 8000
# SIGTERM: the server finishes requests in flight (SHUTDOWN_TIMEOUT_MS) and exits 0; give the container
# more than that to stop (compose.yaml's stop_grace_period, Kubernetes' terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM
# Liveness only: /readyz is the balancer's (a database outage makes every instance not ready, and
# restarting them would not help). The first start migrates and imports before it listens: its time.
HEALTHCHECK --interval=30s --timeout=5s --start-period=180s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself, not npm: the server gets the signals, and nothing is built at start.
CMD ["node", "--max-semi-space-size=8", "dist/src/server.js"]
