// The page at `/`: a small HTML shell, the client bundle and its stylesheet,
// all served by this process (built in memory on first use, see
// src/web/build.ts). The shell carries a strict Content-Security-Policy:
// scripts only from this origin, no inline script, no eval, so even an
// escaping bug could not run HTML from the model or from command output.
// Caching: the shell is `no-cache` (always revalidated, so a new build is
// picked up at once); it names the assets by their content hash
// (/assets/app.<hash>.js), which are `immutable` for a year. The unhashed
// /assets/app.js and app.css stay, revalidated by ETag. Every asset is sent
// brotli- or gzip-compressed when the browser accepts it (compressed once,
// at build), with `Vary: Accept-Encoding`.
import { type Context, Hono } from "hono";
import type { Logger } from "../../log/logger.js";
import { type WebAsset, type WebBundle, webBundle } from "../../web/build.js";

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

const IMMUTABLE = "public, max-age=31536000, immutable";

const shell = (b: WebBundle) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Nomos</title>
<link rel="stylesheet" href="/assets/app.${b.assets.css.hash}.css">
<script type="module" src="/assets/app.${b.assets.js.hash}.js"></script>
</head>
<body><div id="root"><p class="boot">Loading Nomos…</p></div></body>
</html>
`;

/** The best encoding the request accepts of the two we have (q=0 refuses one). */
function encodingFor(accept: string | undefined): "br" | "gzip" | null {
  const offered = new Map(
    (accept ?? "").split(",").map((part) => {
      const [name, ...params] = part.trim().toLowerCase().split(";");
      const q = params.map((p) => /^\s*q=([\d.]+)/.exec(p)?.[1]).find(Boolean);
      return [name ?? "", q === undefined ? 1 : Number(q)] as const;
    }),
  );
  const ok = (name: string) => (offered.get(name) ?? offered.get("*") ?? 0) > 0;
  if (ok("br")) return "br";
  if (ok("gzip")) return "gzip";
  return null;
}

export function webRoutes(deps: { log: Logger }) {
  const security = (c: { header(name: string, value: string): void }) => {
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
  };
  const bundle = () =>
    webBundle().catch((err: unknown) => {
      deps.log.error({ err }, "building the page failed");
      throw err;
    });
  const send = (c: Context, kind: "js" | "css", a: WebAsset) => {
    c.header("Content-Type", kind === "js" ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8");
    c.header("Vary", "Accept-Encoding");
    const encoding = encodingFor(c.req.header("accept-encoding"));
    if (!encoding) return c.body(a.text);
    c.header("Content-Encoding", encoding);
    return c.body(encoding === "br" ? a.br : a.gzip);
  };
  const unhashed = (kind: "js" | "css") => async (c: Context) => {
    const b = await bundle();
    security(c);
    c.header("ETag", b.etag);
    c.header("Cache-Control", "no-cache");
    if (c.req.header("if-none-match") === b.etag) return c.body(null, 304);
    return send(c, kind, b.assets[kind]);
  };
  const hashed = async (c: Context) => {
    const b = await bundle();
    const m = /^app\.([0-9a-f]{16})\.(js|css)$/.exec(c.req.param("file") ?? "");
    const kind = m?.[2] as "js" | "css" | undefined;
    // An old hash (a page from before a restart) gets 404: its shell is stale and reloads.
    if (!m || !kind || b.assets[kind].hash !== m[1]) return c.notFound();
    security(c);
    c.header("Cache-Control", IMMUTABLE);
    return send(c, kind, b.assets[kind]);
  };
  return new Hono()
    .get("/", async (c) => {
      const b = await bundle();
      security(c);
      c.header("Cache-Control", "no-cache");
      return c.html(shell(b));
    })
    .get("/assets/app.js", unhashed("js"))
    .get("/assets/app.css", unhashed("css"))
    .get("/assets/:file", hashed);
}
