# syntax=docker/dockerfile:1
# Node 24 LTS. The base is an argument so a machine without a registry can build on a local image (docker/smoke.sh);
# users get the official one.
ARG BASE_IMAGE=node:24-bookworm-slim

# Production dependencies, no compiler: better-sqlite3 carries prebuilt Node-API binaries. Install scripts are
# skipped (npm would run better-sqlite3's implicit node-gyp rebuild, which needs python3 and make); optional
# packages too: the pinned Node binaries (the image has its own node) and pg's Cloudflare socket. Of
# better-sqlite3 only lib/ and this platform's binary are needed at run time, and the driver must load.
FROM ${BASE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && cd node_modules/better-sqlite3 && rm -rf deps src binding.gyp \
  && find prebuilds -type f ! -name "linux-$(node -p process.arch).node" -delete \
  && cd /app && node -e "new (require('better-sqlite3'))(':memory:').close()"

# TypeScript to dist/: tsc needs the type packages, no native addon and no Node binary of its own. This stage
# and `deps` share nothing, and builders that run stages in parallel run them side by side.
FROM ${BASE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=optional --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The build's incremental state (dist/.tsbuildinfo) is for rebuilding, not for running.
RUN npm run build && rm -f dist/.tsbuildinfo

FROM ${BASE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node and reaps children, so `docker stop` drains instead of waiting.
# plant-store (backup, restore, export, import, copy; docs/backups.md) on the PATH; /backups owned by node, so a
# named volume mounted there starts writable.
RUN apt-get update && apt-get install -y --no-install-recommends tini && apt-get clean && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data /backups && chown node:node /data /backups \
  && printf '#!/bin/sh\nexec node /app/dist/cli/plant-store.js "$@"\n' > /usr/local/bin/plant-store && chmod 755 /usr/local/bin/plant-store
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=file:/data/plants.db \
    METRICS_HOST=0.0.0.0
COPY --chown=root:root package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
USER node
VOLUME ["/data"]
EXPOSE 3000
# Metrics listen on 9464 for Prometheus inside the container network; the port is neither exposed nor published.
# node itself, not curl: the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# The same node flags as `npm start` (tests/unit/node-flags.test.ts): a 4 MiB young generation keeps peak RSS
# near 120 MiB under load instead of 150; without allocation-site pretenuring a burst of 1,000 connections
# cannot leave every later request a third slower (docs/decisions/performance.md).
CMD ["node", "--max-semi-space-size=4", "--no-allocation-site-pretenuring", "dist/server.js"]
