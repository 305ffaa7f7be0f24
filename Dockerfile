# The OpenBaaS server image.
#   docker build -t openbaas .
#   docker run -p 8080:8080 openbaas                     sandbox on an embedded database kept in /app/data
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://… -e OPENBAAS_ENCRYPTION_KEY=… openbaas
# compose.yaml runs the image on PostgreSQL 15 as one `serve` and one `worker` process.

# Build stage: all dependencies and the compiler; tsc turns src/ into dist/. `npm run build` also
# builds the SDK workspace (packages/sdk), so its package.json comes before `npm ci` and its sources
# before the build; the runtime stage has no use for it (`npm ci` skips a workspace that is absent).
# The browser console (console/, Preact) is bundled by esbuild into dist/console/.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY packages/sdk ./packages/sdk
COPY console ./console
COPY scripts/build-console.mjs ./scripts/
RUN npm run build

# Runtime stage: production dependencies only, the built program and the migrations it applies at
# start; no compiler, no sources, no tests.
FROM node:20-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# The embedded database (used when DATABASE_URL is not set) lives in /app/data, owned by the
# unprivileged `node` user of the base image, which runs the server.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 8080
# The slim image has no curl: Node.js's own fetch asks /health/ready (503 while the database is not
# ready, and on SIGTERM for SHUTDOWN_DRAIN_MS; refused once the listener closes).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health/ready').then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]
# What `npm start` runs once dist/ is built, minus the build check: the server is PID 1 and
# handles SIGTERM from `docker stop` itself (graceful shutdown).
CMD ["node", "--max-semi-space-size=32", "dist/cli.js", "serve"]
