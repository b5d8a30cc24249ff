// The targets file (NOMOS_TARGETS_FILE): a JSON array of hosts the agent may
// act on. Invariant: a bad file never half-loads; it stops start-up with one
// TargetsFileError naming the entry (index and name) and the field, and the
// file's contents other than names never appear in that message.
import { access, constants, readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve as resolvePath } from "node:path";
import { z } from "zod";

export const HOST_KEY_SHA256 = /^SHA256:[A-Za-z0-9+/]{43}=?$/;
export const TARGET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export const fileTargetSchema = z.strictObject({
  name: z.string().regex(TARGET_NAME, "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit"),
  host: z.string().min(1, "must not be empty").max(253),
  port: z.number().int().min(1).max(65535).default(22),
  username: z.string().regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, "must be a Unix user name"),
  privateKeyPath: z.string().min(1, "must be a path to a private key file"),
  hostKeySha256: z
    .string()
    .regex(HOST_KEY_SHA256, "must be an OpenSSH fingerprint like SHA256:abc... (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub)"),
  kind: z.enum(["proxmox", "ssh"]),
  /**
   * For an ssh host that is a QEMU VM on one of the file's Proxmox nodes:
   * which one, so Nomos can snapshot it (`qm snapshot`) before a plan
   * changes it (issue 17). Optional.
   */
  vm: z
    .strictObject({
      node: z.string().regex(TARGET_NAME, "must name a Proxmox node target of this file"),
      vmid: z.number().int().min(100, "must be at least 100").max(999_999_999, "must be at most 999999999"),
    })
    .optional(),
});

export type FileTarget = z.output<typeof fileTargetSchema>;

export class TargetsFileError extends Error {
  override name = "TargetsFileError";
}

/** Validates parsed JSON; relative key paths resolve against the file's folder. */
export async function parseTargets(raw: unknown, file: string): Promise<FileTarget[]> {
  if (!Array.isArray(raw)) throw new TargetsFileError(`${file}: must be a JSON array of targets`);
  const targets: FileTarget[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of raw.entries()) {
    const label =
      entry && typeof entry === "object" && typeof (entry as { name?: unknown }).name === "string"
        ? `entry ${index} ("${String((entry as { name: string }).name).slice(0, 63)}")`
        : `entry ${index}`;
    const parsed = fileTargetSchema.safeParse(entry);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(entry)"} ${i.message}`);
      throw new TargetsFileError(`${file}: ${label}: ${problems.join("; ")}`);
    }
    const t = parsed.data;
    if (seen.has(t.name)) throw new TargetsFileError(`${file}: ${label}: name "${t.name}" is used twice`);
    seen.add(t.name);
    const keyPath = isAbsolute(t.privateKeyPath) ? t.privateKeyPath : resolvePath(dirname(file), t.privateKeyPath);
    try {
      await access(keyPath, constants.R_OK);
    } catch {
      throw new TargetsFileError(`${file}: ${label}: privateKeyPath ${keyPath} does not exist or is not readable`);
    }
    targets.push({ ...t, privateKeyPath: keyPath });
  }
  for (const [index, t] of targets.entries()) {
    if (!t.vm) continue;
    const label = `entry ${index} ("${t.name}")`;
    if (t.kind !== "ssh") throw new TargetsFileError(`${file}: ${label}: vm is only for ssh hosts that are QEMU VMs`);
    const node = targets.find((n) => n.name === t.vm!.node);
    if (node?.kind !== "proxmox") {
      throw new TargetsFileError(`${file}: ${label}: vm.node "${t.vm.node}" is not a proxmox target of this file`);
    }
  }
  return targets;
}

export async function loadTargetsFile(file: string): Promise<FileTarget[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new TargetsFileError(`NOMOS_TARGETS_FILE ${file} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // V8 quotes the text around the error ('Unexpected token 'h', "...hunter2..." is not
    // valid JSON'): keep only where it is, so the file's values never reach a log.
    const where = (err as Error).message.replace(/, ".*" is not valid JSON$/s, "");
    const cause = new SyntaxError(where);
    throw new TargetsFileError(
      `${file} is not valid JSON: ${where}${/position \d+/.test(where) ? "" : ` (at position ${jsonErrorPosition(text)})`}`,
      { cause },
    );
  }
  return parseTargets(raw, file);
}

/** Offset of the first character no JSON token holds outside a string (V8 gave no position). */
function jsonErrorPosition(text: string): number {
  const m = /[^\s[\]{}:,"0-9.eE+\-tfnrul]/.exec(text);
  return m ? m.index : 0;
}
