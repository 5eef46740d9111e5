# syntax=docker/dockerfile:1
# filings-export: the exporter (worker, scheduler, run, status, metrics) and the emulator, one image.
# Build for the platform you run: DuckDB's npm package ships a native binary per platform, so the
# image installs its own node_modules and never copies the host's.

FROM node:22-bookworm-slim AS build
WORKDIR /src
# npm ci runs `prepare` (scripts/build.mjs --if-possible), which skips while src/ is not copied yet.
COPY package.json package-lock.json ./
COPY scripts/build.mjs ./scripts/build.mjs
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY jobs ./jobs
# Compiled JavaScript mirrors the source layout (src/, jobs/), so paths relative to a module
# (config/defaults.yaml, data/sec, the OpenAPI contract) resolve as in a checkout.
RUN node scripts/build.mjs

FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` skips here: TypeScript is a dev dependency.
COPY scripts/build.mjs ./scripts/build.mjs
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /src/build/src ./src
COPY --from=build --chown=node:node /src/build/jobs ./jobs
COPY --chown=node:node package.json ./
COPY --chown=node:node bin/container-entry.mjs ./bin/container-entry.mjs
COPY --chown=node:node config ./config
COPY --chown=node:node data/sec ./data/sec
USER node
# Metrics and probes (worker --metrics-port 9464; the emulator listens on 8787).
ENV FILINGS_EXPORT_METRICS_HOST=0.0.0.0 FILINGS_EXPORT_METRICS_PORT=9464
EXPOSE 9464 8787
# tini is PID 1: SIGTERM reaches node, which lets running parts finish (worker.shutdown_timeout_ms).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/container-entry.mjs"]
CMD ["worker"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.FILINGS_EXPORT_METRICS_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
