# syntax=docker/dockerfile:1
# One image, three entry points: cluster-manager, localnet-node and localnet-cli. The entry points
# run as bundles (`npm run build`: one module each plus lazy chunks, the dependencies inside;
# docs/adr/0021) with a compile cache filled at build; the TypeScript sources sit beside them for
# Tilt's dev overlay, which runs them under `node --watch`. The targets differ only in the entry
# point: `cluster-manager` (the default, last stage) and `localnet-node`.
#
#   docker build -t cluster-manager:0.1.0 .
#   docker build -t localnet-node:0.1.0 --target localnet-node .
#
# No HEALTHCHECK: Kubernetes probes the control RPC (/healthz, /readyz) and the node (/v1/health).

# The official Node image. Its major must match package.json "engines" (a test checks).
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, exactly as locked. This drops the `node` dev dependency that pins
# Node for development: the image's own Node 24 runs the app. No install scripts are needed.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Every locked dependency, the bundler (rolldown, a dev dependency) too; nothing of this stage but
# dist/ reaches the image.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/bundle.ts ./scripts/
COPY src ./src
RUN node scripts/bundle.ts dist

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# tini as PID 1 forwards SIGTERM to node (which then shuts down gracefully) and reaps the
# processes of the node CLI in cli mode. npm, corepack and yarn are not needed at run time.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
  && rm -f /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# The sources belong to root and cannot be changed by the app user. Tilt's live_update builds
# with APP_OWNER=1000:1000 so that it can sync changed files into a running dev container.
ARG APP_OWNER=0:0
COPY --chown=${APP_OWNER} src ./src
# The bundles, beside src/ (they name their sources' folder for the files those read).
COPY --from=build /app/dist ./dist
# The package's `bin` entries on PATH, as bundles, e.g. `kubectl exec deploy/cluster-manager --
# cluster-manager status`.
RUN ln -s /app/dist/cluster-manager.mjs /usr/local/bin/cluster-manager \
  && ln -s /app/dist/localnet-node.mjs /usr/local/bin/localnet-node \
  && ln -s /app/dist/localnet-cli.mjs /usr/local/bin/localnet-cli
# Node's compile cache (docs/adr/0017): each target fills it at build time, as the image's user
# and with its Node options (the cache is keyed by both), so processes start without compiling or
# type-stripping the sources again: about 20 MiB less memory and half the start time.
ENV NODE_COMPILE_CACHE=/app/.compile-cache
RUN mkdir /app/.compile-cache && chown 1000:1000 /app/.compile-cache
# The image's `node` user, by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000

FROM runtime AS localnet-node
RUN node /app/src/bin/warm-compile-cache.ts localnet-node /app/dist
EXPOSE 50832 42069
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/localnet-node.mjs"]

FROM runtime AS cluster-manager
# A young generation of 4 MiB semi-spaces instead of V8's default (16 MiB), with the old
# generation's growth held to 20 % (the ENTRYPOINT's flag, below): the 4 → 999 scale's peak 171–177
# → 138–151 MiB, for 5–40 % more CPU in such a burst and a longer reaction tail
# (docs/adr/0009, amended 2026-12-02).
ENV NODE_OPTIONS="--max-semi-space-size=4"
# glibc's allocator gives memory back instead of keeping it for later: at most two arenas, blocks of
# 128 KiB or more mapped on their own, the heap's top trimmed above 128 KiB. About 6 MiB less at
# idle and 12 MiB less at the peak of a 4 → 999 scale (docs/benchmarks.md, "Where the memory goes").
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072
RUN node /app/src/bin/warm-compile-cache.ts cluster-manager /app/dist
EXPOSE 8080
# V8 sets the old generation's next limit 20 % above what a full collection left, instead of a
# factor up to 4 (its default, scaled by how fast it collects), so a burst's promoted garbage is
# collected before it is paid for in pages (docs/adr/0009, amended). On the command line:
# NODE_OPTIONS refuses this V8 flag.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--heap-growing-percent=20", "/app/dist/cluster-manager.mjs"]
