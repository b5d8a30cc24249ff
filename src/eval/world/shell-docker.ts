// Docker in a simulated container: `docker compose` (up, down, ps, logs,
// config) on the stacks a scenario defines, and volumes. Invariant: a
// stack comes up only when its compose file's env files and bind sources
// exist and the stack's own failure (a scenario's fault) is gone.
import { posix } from "node:path";
import { dirExists, type ShellIo } from "./container-files.js";
import type { ContainerState } from "./container-state.js";

export function docker(ct: ContainerState, args: string[], io: ShellIo, cwd: string): number {
  if (!ct.docker) {
    io.err("bash: line 1: docker: command not found\n");
    return 127;
  }
  const words = args.filter((a) => a !== "-d" && a !== "--detach");
  if (words[0] === "volume") {
    if (words[1] === "ls") {
      io.out("DRIVER    VOLUME NAME\n");
      for (const v of ct.volumes) io.out(`local     ${v}\n`);
      return 0;
    }
    if (words[1] === "rm") {
      for (const v of words.slice(2).filter((w) => !w.startsWith("-"))) {
        if (!ct.volumes.delete(v)) {
          io.err(`Error response from daemon: get ${v}: no such volume\n`);
          return 1;
        }
        io.out(`${v}\n`);
      }
      return 0;
    }
  }
  if (words[0] !== "compose") {
    io.err(`docker: '${words[0]}' is not simulated here\n`);
    return 1;
  }
  let i = 1;
  let file: string | undefined;
  let dir: string | undefined;
  while (words[i]?.startsWith("-")) {
    if (words[i] === "-f") file = words[i + 1];
    if (words[i] === "--project-directory") dir = words[i + 1];
    i += 2;
  }
  const sub = words[i];
  const composeFile = file ? posix.resolve(cwd, file) : posix.join(dir ?? cwd, "compose.yaml");
  const stack = ct.stacks.get(posix.dirname(composeFile));
  if (!ct.files.has(composeFile) || !stack) {
    io.err(`open ${composeFile}: no such file or directory\n`);
    return 1;
  }
  if (sub === "up") {
    const why = composeProblem(ct, composeFile) ?? stack.failure?.(ct) ?? null;
    if (why) {
      io.err(`${why}\n`);
      stack.up = false;
      return 1;
    }
    stack.up = true;
    io.err(` Container ${posix.basename(stack.dir)}-app-1  Started\n`);
    return 0;
  }
  if (sub === "down") {
    stack.up = false;
    if (words.includes("-v") || words.includes("--volumes")) for (const v of stack.volumes) ct.volumes.delete(v);
    return 0;
  }
  if (sub === "ps") {
    io.out(`NAME   STATUS\n${posix.basename(stack.dir)}-app-1   ${stack.up ? "Up 5 seconds" : "Exited (1)"}\n`);
    return 0;
  }
  if (sub === "logs") {
    io.out(`${stack.failure?.(ct) ?? "app  | ready"}\n`);
    return 0;
  }
  if (sub === "config") {
    const why = composeProblem(ct, composeFile);
    if (why) {
      io.err(`${why}\n`);
      return 1;
    }
    io.out(ct.files.get(composeFile)!);
    return 0;
  }
  io.err(`docker compose ${sub}: not simulated here\n`);
  return 1;
}

/** What `docker compose` refuses in a compose file: env files and bind mounts that do not exist. */
function composeProblem(ct: ContainerState, composeFile: string): string | null {
  const body = ct.files.get(composeFile) ?? "";
  const dir = posix.dirname(composeFile);
  for (const m of body.matchAll(/^\s*(?:env_file:\s*|-\s+)(\.{0,2}\/[^\s:"]+)(:[^\s"]+)?\s*$/gm)) {
    const path = posix.resolve(dir, m[1]!);
    const isEnv = /env_file/.test(m[0]);
    const exists = ct.files.has(path) || dirExists(ct, path);
    if (!exists)
      return isEnv
        ? `env file ${path} not found: stat ${path}: no such file or directory`
        : `Error response from daemon: invalid mount config: bind source path does not exist: ${path}`;
  }
  return null;
}
