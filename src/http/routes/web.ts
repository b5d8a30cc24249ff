// The page at `/`: a small HTML shell, the client bundle and its stylesheet,
// all served by this process (built in memory on first use, see
// src/web/build.ts). The shell carries a strict Content-Security-Policy:
// scripts only from this origin, no inline script, no eval, so even an
// escaping bug could not run HTML from the model or from command output.
import { type Context, Hono } from "hono";
import type { Logger } from "../../log/logger.js";
import { webBundle } from "../../web/build.js";

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join("; ");

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Nomos</title>
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body><div id="root"><p class="boot">Loading Nomos…</p></div></body>
</html>
`;

export function webRoutes(deps: { log: Logger }) {
  const security = (c: { header(name: string, value: string): void }) => {
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
  };
  const asset = (kind: "js" | "css") => async (c: Context) => {
    const bundle = await webBundle().catch((err: unknown) => {
      deps.log.error({ err }, "building the page failed");
      throw err;
    });
    security(c);
    c.header("ETag", bundle.etag);
    c.header("Cache-Control", "no-cache");
    if (c.req.header("if-none-match") === bundle.etag) return c.body(null, 304);
    c.header("Content-Type", kind === "js" ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8");
    return c.body(kind === "js" ? bundle.js : bundle.css);
  };
  return new Hono()
    .get("/", (c) => {
      security(c);
      c.header("Cache-Control", "no-cache");
      return c.html(SHELL);
    })
    .get("/assets/app.js", asset("js"))
    .get("/assets/app.css", asset("css"));
}
