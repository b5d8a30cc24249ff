// The files of a simulated container as its shell sees them: directories
// exist when a file lies under them (or one was made with mkdir), large
// files (sizesMb) read as a placeholder. Shared by the shell's modules.
// Invariant: a path is answered from ContainerState.files and sizesMb only.
import type { ContainerState } from "./container-state.js";

export interface ShellIo {
  out(text: string): void;
  err(text: string): void;
}

const ALWAYS = new Set(["/", "/etc", "/root", "/tmp", "/var", "/var/log", "/var/lib", "/opt", "/srv", "/usr", "/home"]);

export function dirExists(ct: ContainerState, dir: string): boolean {
  if (ALWAYS.has(dir)) return true;
  const d = dir.endsWith("/") ? dir : `${dir}/`;
  for (const f of [...ct.files.keys(), ...ct.sizesMb.keys()]) if (f.startsWith(d)) return true;
  return ct.files.has(`${d}.dir`);
}

/** Makes an (absolute) directory and its parents. */
export function mkdirs(ct: ContainerState, dir: string): void {
  if (!dirExists(ct, dir)) ct.files.set(`${dir}/.dir`, "");
}

export function readFile(ct: ContainerState, p: string): string | undefined {
  if (ct.files.has(p)) return ct.files.get(p);
  if (ct.sizesMb.has(p)) return `[${ct.sizesMb.get(p)} MB of log lines]\n`;
  return undefined;
}
