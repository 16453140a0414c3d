# Sealpost image: one image for every process (serve, worker, pind, domaind,
# devnet); the compose file picks the subcommand. The first stage builds the
# webmail bundle and dist/, the JavaScript the CLI runs (bin/build-dist.js);
# the TypeScript sources are copied too, so bin/sealpost.js can check that
# dist/ matches them.

# Both stages that run `npm ci` install python3, make and g++: better-sqlite3
# compiles from source wherever its prebuilt binary cannot be downloaded. The
# lockfile is checked against the npm this base image ships (npm 10.8.2), not
# only a newer one (.ci/run).

# Stage 1: every dependency, dev ones included, to build the webmail bundle
# and dist/. bin/ comes first because `npm ci` runs its `prepare` script
# (bin/build-dist.js), which builds nothing until the sources are copied.
FROM node:20-bookworm-slim AS webmail
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:webmail && npm run build:cli

# Stage 2: production dependencies only; the toolchain never reaches the runtime stage.
FROM node:20-bookworm-slim AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Stage 3: the runtime: sources, dist/, production node_modules, the built
# webmail; no toolchain, no dev dependencies, an unprivileged user.
FROM node:20-bookworm-slim
# Two malloc arenas keep resident memory flat (src/run/serve/child-env.ts).
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY chain ./chain
COPY delivery ./delivery
COPY spooler ./spooler
COPY pinning ./pinning
COPY --from=webmail /app/webmail/dist ./webmail/dist
COPY --from=webmail /app/dist ./dist
# A new named volume takes the owner and mode of the directory it is mounted
# on, so every directory docker-compose.yml mounts a volume at exists here,
# owned by the sealpost user (test/e2e/ops-compose.test.ts checks the list):
# data (spool, blobs; devnet's ledger in its own service), pind's store, keys.
# No VOLUME: the compose file names every volume, and a VOLUME would give each
# service that does not mount one there a new anonymous volume at every up.
RUN useradd --system --uid 10001 --home-dir /var/lib/sealpost --shell /usr/sbin/nologin sealpost \
  && mkdir -p /var/lib/sealpost /var/lib/sealpost/pind /etc/sealpost/keys \
  && chown -R sealpost:sealpost /var/lib/sealpost /etc/sealpost/keys
USER sealpost
# MX, submissions, IMAPS, POP3S, account API, domaind, pind (pins, gateway), worker metrics
EXPOSE 2525 2465 1993 1995 8080 8081 8182 8183 9464
ENTRYPOINT ["node", "/app/bin/sealpost.js"]
CMD ["--help"]
