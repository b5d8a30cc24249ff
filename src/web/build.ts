// The page's bundle, built in-process with esbuild the first time it is
// asked for and kept in memory: `npm start` needs no build step, a fresh
// checkout serves the page, and the bundle always matches the source.
// esbuild bundles src/web/client (hono/jsx/dom, no CDN: the machines are
// offline) in ~100 ms; every later request is served from memory with an
// ETag. The stylesheet is style.css followed by the files of STYLESHEETS
// (later rules win). Each asset is compressed once here, with brotli and
// gzip, and named by the hash of its content, so routes/web.ts serves it
// compressed and cacheable for ever under that name. Invariant: a failed
// build is an error the operator sees in the log and as a 500, never a
// half-built page.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { build } from "esbuild";

/** One asset as served: its text, its compressed forms and the hash that names it. */
export interface WebAsset {
  text: string;
  br: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  hash: string;
}

export interface WebBundle {
  js: string;
  css: string;
  etag: string;
  assets: { js: WebAsset; css: WebAsset };
}

/** Stylesheets after style.css, in order: the themes (light, dark) and the chat's newer parts. */
const STYLESHEETS = ["theme.css"];

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

async function asset(text: string): Promise<WebAsset> {
  const [br, gzipped] = await Promise.all([
    brotli(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: text.length } }),
    gz(text, { level: 9 }),
  ]);
  return {
    text,
    br: new Uint8Array(br),
    gzip: new Uint8Array(gzipped),
    hash: createHash("sha256").update(text).digest("hex").slice(0, 16),
  };
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
    // markdown-it needs only the decoder of `entities`; its encoder tables would double that package's share.
    alias: { entities: "entities/lib/decode.js" },
    logLevel: "silent",
  });
  const js = result.outputFiles[0]?.text ?? "";
  const sheets = await Promise.all(["style.css", ...STYLESHEETS].map((f) => readFile(`${here}client/${f}`, "utf8")));
  const css = sheets.join("\n");
  const etag = `"${createHash("sha256").update(js).update(css).digest("hex").slice(0, 16)}"`;
  const [jsAsset, cssAsset] = await Promise.all([asset(js), asset(css)]);
  return { js, css, etag, assets: { js: jsAsset, css: cssAsset } };
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
