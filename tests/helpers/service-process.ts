// Starts the real service process (`npm start`'s entry, src/main.ts) as a
// child with the environment given, waits for it to listen, and stops it
// with SIGTERM. Its JSON log lines are kept for assertions.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: string[];
  /** SIGTERM, then the exit code (SIGKILL after 15 s). */
  stop(): Promise<number | null>;
  /** The exit code once the process has exited and all its output is read (its last words are in lines and stderr). */
  ended(): Promise<number | null>;
}

export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { PATH: process.env.PATH, PORT: "0", NOMOS_LOG_FORMAT: "json", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => stderr.push(l));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const outputClosed = Promise.all(
    [child.stdout!, child.stderr!].map((stream) => new Promise<void>((done) => stream.once("close", () => done()))),
  );
  const ended = Promise.all([exited, outputClosed]).then(([code]) => code);

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 30 s: ${stderr.join("\n")}`)), 30_000);
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
    // Once its output is all read, so the error carries its last words.
    void ended.then((code) => {
      clearTimeout(timer);
      const said = lines.map((l) => String(l.msg)).join("\n");
      reject(new Error(`service exited with ${code} before listening: ${stderr.join("\n")}\n${said}`));
    });
  });

  return {
    url,
    child,
    lines,
    stderr,
    ended: () => ended,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}
