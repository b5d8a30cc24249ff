// Cross-site request refusal for state-changing requests (POST, PUT, PATCH,
// DELETE). A browser sends cookies with any request to our origin, so a
// page elsewhere could make one on the operator's behalf. Such a request
// carries that page's Origin (or Sec-Fetch-Site: cross-site); we answer 403
// unless the Origin's host is ours. A request with neither header and no
// cookie is a script (curl, Bearer token): it has no ambient authority.
// The session cookie is also SameSite=Strict: this is the second lock.
// "Our host" is the Host that refuseForeignHost (http/public-origin.ts)
// already accepted, so a rebound DNS name cannot make a foreign Origin ours.
import type { MiddlewareHandler } from "hono";
import { HttpError } from "./http-error.js";
import { type PublicOrigin, requestHost } from "./public-origin.js";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function refuseCrossSite(publicOrigin: PublicOrigin): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE.has(c.req.method)) return next();
    const origin = c.req.header("origin");
    const host = requestHost(c, publicOrigin);
    if (origin !== undefined && origin !== "null") {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).host;
      } catch {
        originHost = undefined;
      }
      if (originHost === host) return next();
      throw new HttpError("forbidden", `cross-site request refused: Origin ${origin} is not this server (${host})`);
    }
    const site = c.req.header("sec-fetch-site");
    if (site === "same-origin" || site === "none") return next();
    // No Origin and no Fetch Metadata: not a modern browser (curl, a script).
    // Without a cookie it carries no ambient authority to abuse.
    if (site === undefined && (c.req.header("cookie") ?? "") === "") return next();
    throw new HttpError("forbidden", "cross-site request refused: a state-changing request from a browser must carry this server's Origin");
  };
}
