// Runs the real Nomos service (src/main.ts, what `npm start` runs) as a
// child process for the eval: a fresh database for each run (a new
// embedded PostgreSQL under a temporary NOMOS_DATA_DIR, or the DATABASE_URL
// it is given), the targets file of the run's simulated nodes, the model
// endpoint of the run (the meter), and an API token for the simulated
// operator. Invariant: stop() is idempotent and waits for the child to exit
// (SIGTERM, then SIGKILL after 20 s); the child's log is kept for a report.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export interface NomosProcess {
  url: string;
  token: string;
  /** The service's JSON log lines, oldest first. */
  lines: Record<string, unknown>[];
  stop(): Promise<number | null>;
}

export interface NomosProcessOptions {
  targetsFile: string;
  modelUrl: string;
  apiKey?: string;
  authToken?: string;
  model: string;
  /** A database for this run; absent: embedded PostgreSQL under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** More environment for the service (NOMOS_MODEL_CACHE, NOMOS_MODEL_CONTEXT_TOKENS, ...). */
  env?: Record<string, string>;
}

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

export async function startNomos(o: NomosProcessOptions): Promise<NomosProcess> {
  const token = randomBytes(18).toString("hex");
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: "0",
      NOMOS_LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      NOMOS_DATA_DIR: o.dataDir,
      ...(o.databaseUrl ? { DATABASE_URL: o.databaseUrl } : {}),
      ANTHROPIC_BASE_URL: o.modelUrl,
      ...(o.apiKey ? { ANTHROPIC_API_KEY: o.apiKey } : {}),
      ...(o.authToken ? { ANTHROPIC_AUTH_TOKEN: o.authToken } : {}),
      NOMOS_MODEL: o.model,
      NOMOS_TARGETS_FILE: o.targetsFile,
      NOMOS_API_TOKEN: token,
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Nomos did not start within 120 s: ${stderr.slice(-20).join("\n")}`)), 120_000);
    createInterface({ input: child.stdout! }).on("line", (l) => {
      try {
        const line = JSON.parse(l) as Record<string, unknown>;
        lines.push(line);
        if (line.msg === "Nomos is listening") {
          clearTimeout(timer);
          resolve(String(line.url));
        }
      } catch {
        stderr.push(l);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(`Nomos exited with ${code} before listening: ${[...stderr, ...lines.map((x) => String(x.msg))].slice(-20).join("\n")}`),
      );
    });
  });
  let stopping: Promise<number | null> | undefined;
  return {
    url,
    token,
    lines,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null) return child.exitCode;
        child.kill("SIGTERM");
        const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        const code = await exited;
        clearTimeout(killer);
        return code;
      })();
      return stopping;
    },
  };
}
