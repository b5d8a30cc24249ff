// The page's delivery: `/` is a shell with a strict Content-Security-Policy
// (no inline script, no eval, nothing from elsewhere), and the bundle is
// built in-process on first use and then answered from memory with an ETag.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApi } from "./helpers/api-harness.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();
let h: ApiHarness;
beforeAll(async () => {
  h = await startApi(t.db, t.url);
});
afterAll(async () => {
  await h.close();
});

describe("the page's assets", () => {
  it("serves the shell without login, with a CSP that allows only this origin's script", async () => {
    const res = await h.app.request("/");
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).toContain('<script type="module" src="/assets/app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//); // no CDN: the machines are offline
  });

  it("the client never hands text to the HTML parser", async () => {
    const dir = join(import.meta.dirname, "..", "src", "web", "client");
    for (const file of await readdir(dir)) {
      const source = await readFile(join(dir, file), "utf8");
      expect(source, file).not.toMatch(/innerHTML|outerHTML|dangerouslySetInnerHTML|insertAdjacentHTML|document\.write|eval\(/);
    }
  });

  it("builds the bundle once and answers 304 for an unchanged ETag", async () => {
    const js = await h.app.request("/assets/app.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const body = await js.text();
    expect(body.length).toBeGreaterThan(10_000);
    const etag = js.headers.get("etag")!;
    const again = await h.app.request("/assets/app.js", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const css = await h.app.request("/assets/app.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("etag")).toBe(etag);
  });
});
