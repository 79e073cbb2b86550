# svcdb image: docker build -t svcdb .   then   docker run -p 8080:8080 -v svcdb-data:/data svcdb
# (compose.yaml runs it beside Kafka; docs/compose.md). Settings are SVC_* variables
# (docs/configuration.md); test/compose.test.ts checks that every SVC_* name below exists.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile the native addons and the TypeScript -------------------------------------
FROM ${NODE_IMAGE} AS build

# hnswlib-node has no prebuilt binary: its addon is compiled by node-gyp at install, which needs
# python3, make and g++ (classic-level ships prebuilds for linux x64/arm64 glibc).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, so a change of the sources does not recompile the addons.
# --ignore-scripts: the root "prepare" script is a build, and the sources are not here yet;
# `npm rebuild` then runs the dependencies' install scripts (node-gyp) but not "prepare".
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && npm rebuild

COPY tsconfig.json ./
COPY bin ./bin
COPY core ./core
COPY log ./log
COPY projections ./projections
COPY protocols ./protocols
COPY query ./query
COPY sinks ./sinks
# tsconfig also includes test/ and bench/; they are not copied (.dockerignore) and not needed.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: production dependencies and dist/ only, as a non-root user ----------------------
FROM ${NODE_IMAGE} AS runtime

# SVC_OPS_PORT: the operations listener (/health, /health/ready, /health/detailed, /metrics,
# no credentials) defaults to 5432, PostgreSQL's port; the image moves it to 9090, exposed but
# not published by compose.yaml. 0 turns it off. The API (and /api/v1/health) stays on 8080.
ENV NODE_ENV=production \
    SVC_DATA_DIR=/data \
    SVC_HOST=0.0.0.0 \
    SVC_HTTP_PORT=8080 \
    SVC_OPS_PORT=9090

WORKDIR /app
# The application files stay owned by root: the server user can read them, not change them.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

# The official node images have the user `node` (uid 1000). /data is created owned by it before
# VOLUME, so a new named volume starts out writable by the server.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]

EXPOSE 8080 9090

# No curl in the slim image: node's own fetch. /api/v1/health needs no credentials and answers
# 503 when storage cannot write.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SVC_HTTP_PORT || 8080) + '/api/v1/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# svcdb stops cleanly on SIGTERM (docker stop) within SVC_SHUTDOWN_TIMEOUT_MS (10 s by default).
# --max-semi-space-size=16 (MiB): short scavenges, single-row inserts' p99 (docs/configuration.md).
CMD ["node", "--max-semi-space-size=16", "dist/bin/svcdb.js", "serve"]
