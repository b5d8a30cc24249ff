// /sw.js: the page's service worker (src/web/service-worker.js), which shows
// Web Push notifications and opens the session on click. Served from the
// root so its scope is the whole page; public like the page itself (a
// browser fetches it without credentials); read once and kept in memory.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import type { Logger } from "../../log/logger.js";

const source = fileURLToPath(new URL("../../web/service-worker.js", import.meta.url));
let cached: Promise<string> | undefined;

export function serviceWorkerRoutes(deps: { log: Logger }) {
  return new Hono().get("/sw.js", async (c) => {
    cached ??= readFile(source, "utf8").catch((err: unknown) => {
      cached = undefined;
      deps.log.error({ err }, "reading the service worker failed");
      throw err;
    });
    const js = await cached;
    c.header("Content-Type", "text/javascript; charset=utf-8");
    c.header("Cache-Control", "no-cache");
    c.header("Service-Worker-Allowed", "/");
    c.header("X-Content-Type-Options", "nosniff");
    return c.body(js);
  });
}
