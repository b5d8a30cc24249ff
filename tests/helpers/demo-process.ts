// Starts `npm run demo` as a child in its own process group (so a test can
// press Ctrl-C as a terminal does: SIGINT to the whole group), reads the
// password it prints and the service's "Nomos is listening" line.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface DemoProcess {
  child: ChildProcess;
  url: string;
  /** The demo operator's password, as printed. */
  password: string;
  /** The pid of the service (src/main.ts) the demo started. */
  servicePid: number;
  /** stdout and stderr lines, in arrival order. */
  lines: string[];
  /** Ctrl-C: SIGINT to the group; resolves when every process of the demo has let go of its output. */
  interrupt(): Promise<void>;
  /** SIGTERM to the demo process alone; its exit code once all its output is in. */
  terminate(): Promise<number | null>;
}

/**
 * `via: "npm"` runs `npm run demo` as a person would; `via: "node"` runs the
 * demo's entry directly, as a process manager would, so SIGTERM reaches it.
 */
export async function startDemo(env: Record<string, string>, via: "npm" | "node" = "npm"): Promise<DemoProcess> {
  const [command, args] =
    via === "npm" ? ["npm", ["run", "--silent", "demo"]] : [process.execPath, ["--import", "tsx", "src/demo/demo-cli.ts"]];
  const child = spawn(command as string, args as string[], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? "/tmp", PORT: "0", NOMOS_LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const outputClosed = new Promise<void>((resolve) => child.stdout!.once("close", () => resolve()));
  let password = "";
  const started = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo did not start in 60 s:\n${lines.join("\n")}`)), 60_000);
    createInterface({ input: child.stdout! }).on("line", (l) => {
      lines.push(l);
      const signIn = /^\s+sign in\s+demo \/ (\S+)$/.exec(l);
      if (signIn) password = signIn[1]!;
      if (!l.startsWith("{")) return;
      const j = JSON.parse(l) as { msg?: string; url?: string; pid?: number };
      if (j.msg === "Nomos is listening") {
        clearTimeout(timer);
        resolve({ url: j.url!, pid: j.pid! });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited with ${code} before listening:\n${lines.join("\n")}`));
    });
  }).catch(async (err: unknown) => {
    // Leave nothing running behind a failed start.
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // Already gone.
    }
    await outputClosed;
    throw err;
  });
  return {
    child,
    url: started.url,
    password,
    servicePid: started.pid,
    lines,
    async terminate() {
      child.kill("SIGTERM");
      const [code] = await Promise.all([exited, outputClosed]);
      return code;
    },
    async interrupt() {
      // npm itself dies of the SIGINT at once; the demo and the service drain after it.
      process.kill(-child.pid!, "SIGINT");
      await outputClosed;
    },
  };
}

export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
