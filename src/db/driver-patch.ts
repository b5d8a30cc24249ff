// The database driver Nomos needs: postgres.js 3.4.9 with
// patches/postgres+3.4.9.patch applied (npm's postinstall runs
// patch-package). Unpatched, a PostgreSQL restart leaves some queries
// waiting forever and loses pool connections until none are left
// (docs/reliability.md, "The database driver").
//
// Invariant: connect() opens no pool on an unpatched driver; it throws this
// module's error, which says how to fix the install.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Every file the patch changes carries this marker. */
const MARKER = "nomos-patch";
const PATCHED_FILES = ["src/index.js", "src/connection.js", "cjs/src/index.js", "cjs/src/connection.js"];

let checked: Error | null | undefined;

/** Throws when the installed postgres.js lacks the patch; checks once. */
export function assertDriverPatched(): void {
  // require.resolve("postgres") is <package>/cjs/src/index.js.
  checked ??= unpatchedDriverError(dirname(dirname(dirname(createRequire(import.meta.url).resolve("postgres")))));
  if (checked) throw checked;
}

/** The error for the postgres.js package at `root`, or null when it is patched. */
export function unpatchedDriverError(root: string): Error | null {
  const missing = PATCHED_FILES.filter((file) => !readFileSync(join(root, file), "utf8").includes(MARKER));
  if (missing.length === 0) return null;
  return new Error(
    `postgres.js at ${root} is not patched (${missing.join(", ")} lack the fix), so a PostgreSQL restart could lose queries and pool connections. ` +
      "Run `npm install` in the Nomos folder with install scripts allowed (not --ignore-scripts): its postinstall applies patches/postgres+3.4.9.patch. " +
      "If you upgraded postgres.js to a release that fixes these itself, delete the patch and this check (src/db/driver-patch.ts).",
  );
}
