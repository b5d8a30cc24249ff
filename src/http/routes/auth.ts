// Login, logout, the first operator, and tokens for scripts.
//   GET  /api/me        who am I and my role (operator null when logged out), is setup needed
//   POST /api/setup     {username, password, setupCode}: the first operator, only while there
//                       is none, only with the code from the service's log (403 without)
//   POST /api/login     {username, password}: sets the HttpOnly SameSite=Strict cookie
//                       (Secure when operators reach us over https)
//   POST /api/logout    forgets this browser's login
//   POST /api/tokens    {days?}: a Bearer token for scripts (shown once), with its owner's role
// Invariant: a login attempt takes its throttle slots (per source address,
// per username: src/auth/throttle.ts) before any password is checked, and a
// refusal is 429 with Retry-After; a source with no recent failures is never
// refused for a username's failures elsewhere.
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { operatorLoginCreate, operatorLoginDelete } from "../../auth/logins.js";
import { type OperatorInfo, operatorCount, operatorCreate, operatorGetByUsername, USERNAME_PATTERN } from "../../auth/operators.js";
import { DUMMY_HASH, passwordVerify } from "../../auth/password.js";
import { PASSWORD_MAX, passwordProblem } from "../../auth/password-strength.js";
import { setupCodeMatches } from "../../auth/setup-code.js";
import { throttleAttemptRelease, throttleAttemptTake } from "../../auth/throttle.js";
import type { ApiDeps } from "../api-deps.js";
import { type AuthEnv, identify, requireOperator, SESSION_COOKIE } from "../auth-middleware.js";
import { HttpError } from "../http-error.js";
import { clientAddress, publicOriginFrom, requestIsHttps } from "../public-origin.js";
import { validate } from "../validate.js";

const credentials = z.object({
  username: z.string().regex(USERNAME_PATTERN, "must be 1-64 letters, digits or . _ @ -"),
  password: z.string().min(1, "is required").max(PASSWORD_MAX),
});
const newOperator = credentials.extend({
  password: z.string().min(8, "must be at least 8 characters").max(PASSWORD_MAX),
  setupCode: z.string().max(100).optional(),
});

const tooMany = (c: Context, retryAfterS: number, what: string) => {
  c.header("Retry-After", String(retryAfterS));
  return new HttpError("too_many_requests", `too many failed ${what}; try again in ${retryAfterS} s`);
};

export function authRoutes(deps: ApiDeps) {
  const ttl = deps.loginTtlSeconds ?? 30 * 24 * 3600;
  const origin = deps.publicOrigin ?? publicOriginFrom({ host: "127.0.0.1", port: 8080 });

  const startLogin = async (c: Context, operator: OperatorInfo) => {
    const { token, expiresAt } = await operatorLoginCreate(deps.db, { operator, ttlSeconds: ttl });
    setCookie(c, SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: "Strict",
      secure: requestIsHttps(c, origin),
      path: "/",
      expires: expiresAt,
    });
  };

  return new Hono<AuthEnv>()
    .get("/api/me", async (c) => {
      const who = await identify(c, deps).catch(() => undefined);
      const needsSetup = (await operatorCount(deps.db)) === 0;
      return c.json({
        operator: who ? { username: who.operator.username, role: who.operator.role } : null,
        needsSetup,
        notices: deps.notices ?? [],
      });
    })
    .post("/api/setup", validate("json", newOperator), async (c) => {
      const { username, password, setupCode } = c.req.valid("json");
      // Codes are guessed like passwords: the same per-source throttle.
      const addr = await throttleAttemptTake(deps.db, { key: `addr:${clientAddress(c, origin)}` });
      if (!addr.taken) throw tooMany(c, addr.retryAfterS, "attempts");
      if (!deps.setupCode || setupCode === undefined || !setupCodeMatches(deps.setupCode, setupCode)) {
        deps.log.warn("first-operator form refused: wrong or missing setup code");
        throw new HttpError(
          "forbidden",
          'body.setupCode: the setup code is missing or wrong; it is printed in the Nomos service log at start (look for "setup code"), or create the operator with npm run create-operator',
          "body.setupCode",
        );
      }
      await throttleAttemptRelease(deps.db, { key: addr.key });
      const problem = passwordProblem(password, { username });
      if (problem) throw new HttpError("bad_request", `body.password: ${problem}`, "body.password");
      const created = await operatorCreate(deps.db, { username, password, actor: `operator:${username}`, onlyIfNone: true });
      if (!created) throw new HttpError("conflict", "an operator already exists; log in instead");
      deps.log.info({ username }, "first operator created from the page");
      await startLogin(c, created);
      return c.json({ operator: { username: created.username, role: created.role } }, 201);
    })
    .post("/api/login", validate("json", credentials), async (c) => {
      const { username, password } = c.req.valid("json");
      const addr = await throttleAttemptTake(deps.db, { key: `addr:${clientAddress(c, origin)}` });
      if (!addr.taken) throw tooMany(c, addr.retryAfterS, "logins from this address");
      const user = await throttleAttemptTake(deps.db, { key: `user:${username.toLowerCase()}` });
      // A hammered username refuses only sources that failed before; this
      // attempt is the address's first failure-in-waiting when failures is 1.
      if (!user.taken && addr.failures > 1) throw tooMany(c, user.retryAfterS, `logins for ${username}`);
      const op = await operatorGetByUsername(deps.db, { username });
      const ok = await passwordVerify(password, op?.password_hash ?? DUMMY_HASH);
      if (!op || !ok) {
        deps.log.warn({ username, failures: addr.failures }, "failed login");
        throw new HttpError("unauthorized", "wrong username or password");
      }
      await throttleAttemptRelease(deps.db, { key: addr.key });
      if (user.taken) await throttleAttemptRelease(deps.db, { key: user.key });
      await startLogin(c, { id: op.id, username: op.username, role: op.role });
      return c.json({ operator: { username: op.username, role: op.role } });
    })
    .post("/api/logout", async (c) => {
      const token = getCookie(c, SESSION_COOKIE);
      if (token) {
        const who = await identify(c, deps).catch(() => undefined);
        await operatorLoginDelete(deps.db, { token, actor: who?.actor ?? "system:logout" });
      }
      deleteCookie(c, SESSION_COOKIE, { path: "/", secure: requestIsHttps(c, origin) });
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
          operator: { id: op.id, username: op.username, role: op.role },
          ttlSeconds: days * 24 * 3600,
        });
        return c.json({ token, expiresAt }, 201);
      },
    );
}
