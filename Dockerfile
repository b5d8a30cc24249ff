# Nomos in a container: the same `npm start` as on a laptop (tsx runs the
# TypeScript directly; there is no separate build step), production
# dependencies only, as the unprivileged `node` user. compose.yaml runs it
# beside PostgreSQL 17; without DATABASE_URL it would start its embedded one
# under NOMOS_DATA_DIR=/data.

# ── dependencies ─────────────────────────────────────────────────────────────
FROM node:22-bookworm-slim AS deps
WORKDIR /app
# ssh2's optional native crypto builds with python3/make/g++; without them it
# falls back to pure JS, so the build tools stay in this stage only.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# patches/ is applied by the postinstall script (patch-package).
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund

# ── runtime ──────────────────────────────────────────────────────────────────
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    NOMOS_DATA_DIR=/data \
    NOMOS_LOG_FORMAT=json
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY db ./db
COPY src ./src
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--import", "tsx", "src/main.ts"]
