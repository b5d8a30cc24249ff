// Login, logout, the first operator, and tokens for scripts.
//   GET  /api/me        who am I (200 with operator null when logged out), is setup needed
//   POST /api/setup     {username, password}: the first operator, only while there is none
//   POST /api/login     {username, password}: sets the HttpOnly SameSite=Strict cookie
//   POST /api/logout    forgets this browser's login
//   POST /api/tokens    {days?}: a Bearer token for scripts (shown once)
// Invariant: failed logins are counted per client and per username and
// refused with 429 past the limit, before any password is checked.
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { operatorLoginCreate, operatorLoginDelete } from "../../auth/logins.js";
import { type AuthEnv, identify, requireOperator, SESSION_COOKIE } from "../../auth/middleware.js";
import {
  type OperatorInfo,
  operatorCount,
  operatorCreate,
  operatorGetByUsername,
  PASSWORD_MIN,
  USERNAME_PATTERN,
} from "../../auth/operators.js";
import { DUMMY_HASH, passwordVerify } from "../../auth/password.js";
import { LoginRateLimiter } from "../../auth/rate-limit.js";
import type { ApiDeps } from "../api-deps.js";
import { HttpError } from "../http-error.js";
import { validate } from "../validate.js";

const credentials = z.object({
  username: z.string().regex(USERNAME_PATTERN, "must be 1-64 letters, digits or . _ @ -"),
  password: z.string().min(1, "is required").max(1024),
});
const newOperator = credentials.extend({
  password: z.string().min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`).max(1024),
});

function clientAddress(c: { env: unknown }): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? "local";
}

export function authRoutes(deps: ApiDeps, limiter = new LoginRateLimiter()) {
  const ttl = deps.loginTtlSeconds ?? 30 * 24 * 3600;

  const startLogin = async (c: Context, operator: OperatorInfo) => {
    const { token, expiresAt } = await operatorLoginCreate(deps.db, { operator, ttlSeconds: ttl });
    setCookie(c, SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: "Strict",
      secure: new URL(c.req.url).protocol === "https:",
      path: "/",
      expires: expiresAt,
    });
  };

  return new Hono<AuthEnv>()
    .get("/api/me", async (c) => {
      const who = await identify(c, deps).catch(() => undefined);
      const needsSetup = (await operatorCount(deps.db)) === 0;
      return c.json({
        operator: who ? { username: who.operator.username } : null,
        needsSetup,
        notices: deps.notices ?? [],
      });
    })
    .post("/api/setup", validate("json", newOperator), async (c) => {
      const { username, password } = c.req.valid("json");
      const created = await operatorCreate(deps.db, {
        username,
        password,
        actor: `operator:${username}`,
        onlyIfNone: true,
      });
      if (!created) throw new HttpError("conflict", "an operator already exists; log in instead");
      deps.log.info({ username }, "first operator created from the page");
      await startLogin(c, created);
      return c.json({ operator: { username: created.username } }, 201);
    })
    .post("/api/login", validate("json", credentials), async (c) => {
      const { username, password } = c.req.valid("json");
      const keys = [`addr:${clientAddress(c)}`, `user:${username.toLowerCase()}`];
      const wait = limiter.retryAfter(keys);
      if (wait > 0) {
        c.header("Retry-After", String(wait));
        throw new HttpError("too_many_requests", `too many failed logins; try again in ${wait} s`);
      }
      const op = await operatorGetByUsername(deps.db, { username });
      const ok = await passwordVerify(password, op?.password_hash ?? DUMMY_HASH);
      if (!op || !ok) {
        limiter.fail(keys);
        deps.log.warn({ username }, "failed login");
        throw new HttpError("unauthorized", "wrong username or password");
      }
      limiter.succeed(keys);
      await startLogin(c, { id: op.id, username: op.username });
      return c.json({ operator: { username: op.username } });
    })
    .post("/api/logout", async (c) => {
      const token = getCookie(c, SESSION_COOKIE);
      if (token) {
        const who = await identify(c, deps).catch(() => undefined);
        await operatorLoginDelete(deps.db, { token, actor: who?.actor ?? "system:logout" });
      }
      deleteCookie(c, SESSION_COOKIE, { path: "/" });
      return c.body(null, 204);
    })
    .post(
      "/api/tokens",
      requireOperator(deps),
      validate("json", z.object({ days: z.number().int().min(1).max(366).default(90) })),
      async (c) => {
        const op = c.get("operator");
        if (!op.id) throw new HttpError("forbidden", "the API token cannot mint tokens; log in as an operator");
        const { days } = c.req.valid("json");
        const { token, expiresAt } = await operatorLoginCreate(deps.db, {
          operator: { id: op.id, username: op.username },
          ttlSeconds: days * 24 * 3600,
        });
        return c.json({ token, expiresAt }, 201);
      },
    );
}
