// Which Chromium the browser tests drive, in this order:
//   1. CHROMIUM_PATH, when set (it must exist);
//   2. the system's chromium (Debian's /usr/bin/chromium, which CI installs);
//   3. the one @sparticuz/chromium ships inside its npm package (a
//      devDependency), unpacked to the temporary folder on first use.
// Resolved once per `vitest run` (global-setup.ts) and handed to the test
// files, so parallel files never unpack it at the same time.
import { existsSync } from "node:fs";

export interface BrowserSource {
  path: string;
  from: "CHROMIUM_PATH" | "system" | "@sparticuz/chromium";
}

const SYSTEM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

export async function findBrowser(env = process.env): Promise<BrowserSource> {
  if (env.CHROMIUM_PATH) {
    if (!existsSync(env.CHROMIUM_PATH))
      throw new Error(`CHROMIUM_PATH is ${env.CHROMIUM_PATH}, which does not exist; unset it or point it at a Chromium`);
    return { path: env.CHROMIUM_PATH, from: "CHROMIUM_PATH" };
  }
  const system = SYSTEM.find((p) => existsSync(p));
  if (system) return { path: system, from: "system" };
  try {
    const { default: packaged } = await import("@sparticuz/chromium");
    return { path: await packaged.executablePath(), from: "@sparticuz/chromium" };
  } catch (err) {
    throw new Error(
      `no Chromium for the browser tests: CHROMIUM_PATH is unset, ${SYSTEM.join(" and ")} are absent, and @sparticuz/chromium did not unpack (${(err as Error).message}); run npm install, or apt-get install -y chromium`,
    );
  }
}
