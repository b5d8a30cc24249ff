// The page's bundle, built in-process with esbuild the first time it is
// asked for and kept in memory: `npm start` needs no build step, a fresh
// checkout serves the page, and the bundle always matches the source.
// esbuild bundles src/web/client (hono/jsx/dom, no CDN: the machines are
// offline) in ~100 ms; every later request is served from memory with an
// ETag. Invariant: a failed build is an error the operator sees in the log
// and as a 500, never a half-built page.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export interface WebBundle {
  js: string;
  css: string;
  etag: string;
}

const here = fileURLToPath(new URL(".", import.meta.url));

export async function webBundleBuild(): Promise<WebBundle> {
  const result = await build({
    entryPoints: [`${here}client/main.tsx`],
    bundle: true,
    write: false,
    format: "esm",
    target: ["es2022"],
    minify: true,
    jsx: "automatic",
    jsxImportSource: "hono/jsx/dom",
    legalComments: "none",
    logLevel: "silent",
  });
  const js = result.outputFiles[0]?.text ?? "";
  const css = await readFile(`${here}client/style.css`, "utf8");
  const etag = `"${createHash("sha256").update(js).update(css).digest("hex").slice(0, 16)}"`;
  return { js, css, etag };
}

let cached: Promise<WebBundle> | undefined;

/** The bundle, built once per process. A failed build is retried on the next request. */
export function webBundle(): Promise<WebBundle> {
  cached ??= webBundleBuild().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
