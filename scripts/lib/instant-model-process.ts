// Starts the instant Messages API double (instant-model.ts) in a child
// process, so its CPU is not counted as the benchmark's, and hands back its
// URL and the requests it saw (time and the execution ids the last message
// names). Invariant: stop() ends the child (its stdin closes).
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface InstantModel {
  url: string;
  onRequest(cb: (t: number, ids: string[]) => void): void;
  stop(): void;
}

export async function startInstantModel(): Promise<InstantModel> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", new URL("./instant-model.ts", import.meta.url).pathname], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  let cb: (t: number, ids: string[]) => void = () => {};
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the instant model double exited (${code})`)));
    lines.once("line", resolve);
  });
  lines.on("line", (line) => {
    const [t, ...ids] = line.split(" ").filter((x) => x !== "");
    cb(Number(t), ids);
  });
  return {
    url,
    onRequest: (f) => {
      cb = f;
    },
    stop: () => {
      child.stdin?.end();
    },
  };
}
