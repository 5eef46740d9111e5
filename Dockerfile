# syntax=docker/dockerfile:1
# filings-export: the exporter (worker, scheduler, run, status, metrics) and the emulator, one image.
# Build for the platform you run: DuckDB's npm package ships a native binary per platform, so the
# image installs its own node_modules and never copies the host's.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY scripts/build.mjs scripts/bundle-cli.mjs ./scripts/
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY config ./config
COPY data/sec ./data/sec
COPY docs ./docs
# The image holds exactly the npm package's files: `npm pack` compiles (prepack: scripts/build.mjs)
# and packs what package.json `files` names (build/, bin/, config/, data/sec/), unpacked to /package.
RUN npm pack --pack-destination /tmp \
  && mkdir /package \
  && tar -xzf /tmp/filings-export-*.tgz -C /package --strip-components=1

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /package ./
USER node
# Metrics and probes (worker --metrics-port 9464; the emulator listens on 8787).
ENV FILINGS_EXPORT_METRICS_HOST=0.0.0.0 FILINGS_EXPORT_METRICS_PORT=9464
EXPOSE 9464 8787
# tini is PID 1: SIGTERM reaches node, which lets running parts finish (worker.shutdown_timeout_ms).
# The entry point runs the package's compiled build/ (bin/run-compiled.mjs), as its bin does.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/container-entry.mjs"]
CMD ["worker"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.FILINGS_EXPORT_METRICS_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
