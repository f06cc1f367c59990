# syntax=docker/dockerfile:1
# NOTE: not run on the machine that wrote it (Docker was not available there). Review it,
# build it and try it before relying on it.
#
# Leasehold: the console, the JSON API and (unless LEASEHOLD_COLLECTOR=off) a collector,
# served by `npm start` as the unprivileged user `node`.
#
#   docker build -t leasehold .
#   docker run --init -p 127.0.0.1:3000:3000 -v leasehold-data:/var/lib/leasehold \
#     -v "$PWD/leasehold.config.json:/etc/leasehold/leasehold.config.json:ro" \
#     -e LEASEHOLD_CONFIG=/etc/leasehold/leasehold.config.json leasehold
#
# The embedded store (PGlite) lives in the volume /var/lib/leasehold. Set DATABASE_URL to
# use PostgreSQL instead. Visitors must sign in unless anonymous reading is turned on
# (LEASEHOLD_ANONYMOUS_ROLE=viewer); with it on, the server warns at start that anyone who
# reaches the published port reads every lease (docs/security.md).

# ---------------------------------------------------------------------------- build
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1

# `npm ci` runs the project's postinstall, `prisma generate` (scripts/prisma-generate.mjs),
# which reads prisma/schema.prisma: both must be there first, and so must the stub package
# that package.json's "overrides" installs in place of Prisma's local streams server.
COPY package.json package-lock.json ./
COPY scripts/prisma-generate.mjs scripts/
COPY scripts/npm-stubs scripts/npm-stubs
COPY prisma prisma
RUN npm ci

COPY . .
# Generates the Prisma client again and runs `next build`; the build cache is not needed to serve.
RUN npm run build && rm -rf .next/cache

# ---------------------------------------------------------------------------- run
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    HOST=0.0.0.0 \
    PORT=3000 \
    LEASEHOLD_DATA_DIR=/var/lib/leasehold/data

# The whole tree, development dependencies included: `npm start` runs TypeScript through
# tsx (scripts/start.ts, lib/), the CLI needs lib/ and prisma/migrations, and
# `leasehold migrate check` needs the dev dependency @prisma/prisma-schema-wasm.
COPY --from=build --chown=node:node /app /app

# The volume's directory holds the data directory and its lock file (data.lock), so both
# persist together and belong to `node`.
RUN mkdir -p /var/lib/leasehold && chown node:node /var/lib/leasehold
VOLUME /var/lib/leasehold

USER node
EXPOSE 3000

HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

# The embedded store's lock file holds the pid of the process that has the store open. A
# container that was killed (not stopped) leaves it behind, and in a new container the pids
# repeat, so the leftover file could name the new server's own pid and block the start. At
# container start nothing in this container can hold the store, so the leftover is removed.
# (The lock cannot protect the volume from another container anyway: never run two
# containers on one data volume.) SIGTERM (docker stop) closes the store cleanly: it goes to
# scripts/start.ts (what `npm start` runs), which passes it on to the server; npm itself would
# exit on it and leave the server running without its signal.
CMD ["sh", "-c", "rm -f \"$LEASEHOLD_DATA_DIR.lock\" && exec node --import tsx scripts/start.ts"]
