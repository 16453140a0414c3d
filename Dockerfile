# Multi-stage build: native modules (better-sqlite3) compile in the build
# stage; the runtime stage carries production dependencies only and runs as
# an unprivileged user.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY bin ./bin
COPY src ./src
COPY chain ./chain
COPY delivery ./delivery
COPY spooler ./spooler
COPY pinning ./pinning

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
RUN useradd --system --uid 10001 --home /var/lib/sealpost sealpost && mkdir -p /var/lib/sealpost && chown sealpost /var/lib/sealpost
USER sealpost
VOLUME ["/var/lib/sealpost"]
ENTRYPOINT ["node", "/app/bin/sealpost.js"]
CMD ["--help"]
