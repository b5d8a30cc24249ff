// The page's delivery: `/` is a shell with a strict Content-Security-Policy
// (no inline script, no eval, nothing from elsewhere), and the bundle is
// built in-process on first use and then answered from memory with an ETag,
// compressed (brotli or gzip, as the browser accepts), under content-hashed
// names cached for ever while the shell is revalidated every time.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
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
    expect(html).toMatch(/<script type="module" src="\/assets\/app\.[0-9a-f]{16}\.js"><\/script>/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
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

  it("serves the assets compressed, the hashed ones immutable", async () => {
    const html = await (await h.app.request("/")).text();
    const js = /src="(\/assets\/app\.[0-9a-f]{16}\.js)"/.exec(html)![1]!;
    const css = /href="(\/assets\/app\.[0-9a-f]{16}\.css)"/.exec(html)![1]!;
    const plain = await (await h.app.request("/assets/app.js", { headers: { "accept-encoding": "identity" } })).text();
    for (const path of [js, css]) {
      const br = await h.app.request(path, { headers: { "accept-encoding": "gzip, deflate, br" } });
      expect(br.status).toBe(200);
      expect(br.headers.get("content-encoding")).toBe("br");
      expect(br.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(br.headers.get("vary")).toBe("Accept-Encoding");
      const compressed = Buffer.from(await br.arrayBuffer());
      const text = brotliDecompressSync(compressed).toString("utf8");
      if (path.endsWith(".js")) {
        expect(text).toBe(plain);
        expect(compressed.length).toBeLessThan(plain.length / 2.5);
      }
      const gz = await h.app.request(path, { headers: { "accept-encoding": "gzip" } });
      expect(gz.headers.get("content-encoding")).toBe("gzip");
      expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString("utf8")).toBe(text);
    }
    // The unhashed names are revalidated; an unknown hash is not served.
    const unhashed = await h.app.request("/assets/app.js", { headers: { "accept-encoding": "gzip" } });
    expect(unhashed.headers.get("cache-control")).toBe("no-cache");
    expect(unhashed.headers.get("content-encoding")).toBe("gzip");
    expect((await h.app.request("/assets/app.0000000000000000.js")).status).toBe(404);
  });
});
