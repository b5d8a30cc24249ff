// What a path means for risk: a temporary path (losing it loses nothing), a
// block device or kernel trigger (writing onto it loses a disk or the host),
// a file the host needs to boot or let anyone log in, a secret store.
// Invariant: a path whose value is only known at run time (a variable, a
// glob, a relative path after an unknown `cd`) resolves to undefined, and
// every caller treats undefined as the worst it could be.
import { posix } from "node:path";
import type { Risk } from "../db/schema.js";
import type { Redirect, Word } from "./shell-words.js";

/** Where the commands of a line run: root's home over SSH unless a `cd` says otherwise; undefined once unknown. */
export const HOME = "/root";

/** The only places a read-only command may write to. */
const NULL_SINKS = /^\/dev\/(null|stdout|stderr|fd\/[12])$/;
const HARMLESS_DEVICES = /^\/dev\/(null|zero|full|u?random|stdout|stderr|stdin|tty|fd\/\d+|pts\/\d+)$/;
const BLOCK_DEVICE =
  /^\/dev\/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+(n\d+(p\d+)?)?|mmcblk\d+(p\d+)?|md\d+|md\/.+|dm-\d+|zd\d+|loop\d+|disk\/.+|mapper\/.+|zvol\/.+|[a-z0-9_-]+\/[a-z0-9_.-]+|sr\d+|nbd\d+|rbd\d+|bcache\d+|drbd\d+|mem|kmem|port|console|kmsg|watchdog\d*)$/;
/** Kernel files a write to which reboots, halts, crashes or removes hardware. */
const KERNEL_TRIGGERS =
  /^\/(proc\/sysrq-trigger|proc\/sys\/kernel\/(panic.*|sysrq)|sys\/power\/(state|disk)|sys\/(block|class|bus|devices)\/.*\/(delete|remove|unbind)|sys\/firmware\/efi\/efivars\/.*)$/;
/** Files and trees a host cannot boot or let anyone log in without. */
const VITAL =
  /^\/(etc\/(passwd|shadow|group|gshadow|fstab|sudoers|sudoers\.d(\/.*)?|crypttab|default\/grub|network\/interfaces|nsswitch\.conf|pam\.d(\/.*)?|security(\/.*)?|shells|login\.defs|ld\.so\.preload|ld\.so\.conf|inittab|kernel\/cmdline|initramfs-tools(\/.*)?|pve(\/.*)?|ssh\/sshd_config)|boot(\/.*)?|(usr\/)?(s?bin|lib|lib64)(\/.*)?|root\/\.ssh\/authorized_keys)$/;
/** The roots of the filesystem tree a recursive change must not touch. */
const SYSTEM_TREES = /^\/((etc|boot|usr|bin|sbin|lib|lib64|var|root|home|srv|opt|dev|proc|sys|run)\/?)?$/;

/** Secret stores: reading one hands its contents to the model. */
const SECRET_PATHS = [
  /^\/etc\/(g?shadow-?|security\/opasswd)$/,
  /^\/etc\/pve\/priv(\/.*)?$/,
  /^\/etc\/pve\/(local|nodes\/[^/]+)\/[^/]*\.key$/,
  /^\/var\/lib\/pve-cluster(\/.*)?$/,
  /^\/etc\/ssh\/ssh_host_[^/]*_key$/,
  /^\/etc\/ssl\/private(\/.*)?$/,
  /^\/etc\/letsencrypt\/(live|archive|keys)\/.*(privkey|key)[^/]*$/,
  /^\/etc\/kubernetes\/.*\.conf$/,
  /^\/etc\/rancher\/k3s\/k3s\.yaml$/,
  /^\/etc\/wireguard(\/.*)?$/,
  /^\/proc\/[^/]+\/environ$/,
  /^\/run\/secrets(\/.*)?$/,
  /(^|\/)\.ssh(\/.*)?$/,
  /(^|\/)(id_(rsa|dsa|ecdsa|ed25519)(_sk)?)$/,
  /(^|\/)[^/]*\.(key|p12|pfx|jks|keystore|keyring|kdbx)$/,
  /(^|\/)[^/]*(privkey|private[-_]?key|-key)[^/]*\.pem$/,
  /(^|\/)\.(pgpass|my\.cnf|netrc|git-credentials|vault-token|npmrc|pypirc)$/,
  /(^|\/)\.(docker|aws|kube|gnupg|password-store|config\/gcloud)(\/.*)?$/,
  /(^|\/)kubeconfig[^/]*$/,
  /(^|\/)(\.env(\.[^/]*)?|[^/]+\.env)$/,
  /(^|\/)(credentials|secrets?)(\.[a-z]+)?$/i,
];

/** The absolute, normalized path a word names, if it is known before the line runs. */
export function resolvePath(word: Word, cwd: string | undefined): string | undefined {
  let text = word.text;
  if (word.dynamic || (word.expanded && !text.startsWith("~"))) return undefined;
  if (text === "~" || text.startsWith("~/")) text = HOME + text.slice(1);
  else if (text.startsWith("~")) return undefined;
  if (text.startsWith("/")) return posix.normalize(text);
  if (cwd === undefined) return undefined;
  return posix.normalize(posix.join(cwd, text));
}

export function isTemporaryPath(path: string | undefined): boolean {
  return path !== undefined && /^\/(tmp|var\/tmp|run\/user\/\d+\/tmp|dev\/shm)\/[^/]/.test(path);
}
export const isNullSink = (path: string | undefined) => path !== undefined && NULL_SINKS.test(path);
export const isBlockDevice = (path: string | undefined) => path !== undefined && !HARMLESS_DEVICES.test(path) && BLOCK_DEVICE.test(path);
export const isKernelTrigger = (path: string | undefined) => path !== undefined && KERNEL_TRIGGERS.test(path);
export const isVitalFile = (path: string | undefined) => path !== undefined && VITAL.test(path);
export const isSystemTree = (path: string | undefined) => path !== undefined && SYSTEM_TREES.test(path);

/** A path a glob or variable could stand for is judged by the text before its first unknown part. */
export function couldBeSecret(word: Word, cwd: string | undefined): boolean {
  const path = resolvePath(word, cwd);
  if (path !== undefined) return SECRET_PATHS.some((re) => re.test(path));
  // A glob: try what it could match under its fixed directory.
  const text = word.text;
  if (!/\$|`/.test(text) && word.dynamic) {
    const re = globToRegExp(text.startsWith("/") ? text : `${cwd ?? "/__unknown__"}/${text}`);
    const dir = text.startsWith("/") ? text.slice(0, text.search(/[*?[]/)) : "";
    const base = dir.replace(/\/[^/]*$/, "");
    const samples = [...SECRET_SAMPLES, ...SECRET_BASENAMES.map((b) => `${base}/${b}`)];
    return samples.some((s) => re.test(s));
  }
  // A variable: it could be anything.
  return true;
}

const SECRET_SAMPLES = [
  "/etc/shadow",
  "/etc/gshadow",
  "/etc/pve/priv/authkey.key",
  "/etc/pve/priv",
  "/root/.ssh/id_rsa",
  "/root/.ssh",
  "/home/u/.ssh/id_ed25519",
  "/root/.pgpass",
  "/root/.kube/config",
  "/etc/ssl/private/server.key",
  "/etc/wireguard/wg0.conf",
  "/proc/1/environ",
];
/** Names that are secret wherever they are. */
const SECRET_BASENAMES = [
  "id_rsa",
  "id_ed25519",
  "server.key",
  "kubeconfig",
  "secret.env",
  "credentials",
  "secrets.yaml",
  "privkey.pem",
  "store.p12",
];

function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) re += "\\[";
      else {
        re += `[${glob
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

export interface Effect {
  risk: Risk;
  reason: string;
}

/**
 * The risk of writing to `target` (tee, cp, dd of=, a redirection). Any write
 * onto a device or kernel trigger, or onto a file the host needs, is
 * destructive, and so is a write whose target is unknown (it could be either).
 */
export function writeEffect(target: Word, cwd: string | undefined, verb = "writes"): Effect | undefined {
  const path = resolvePath(target, cwd);
  if (isNullSink(path)) return undefined;
  if (path === undefined)
    return {
      risk: "destructive",
      reason: `${verb} \`${target.text}\`, a path only known when it runs (it could be a disk or /etc/passwd)`,
    };
  if (isBlockDevice(path)) return { risk: "destructive", reason: `${verb} onto the block device ${path}` };
  if (isKernelTrigger(path)) return { risk: "destructive", reason: `${verb} ${path}, which reboots, halts or removes hardware` };
  if (isVitalFile(path)) return { risk: "destructive", reason: `${verb} ${path}, which the host needs to boot or let anyone log in` };
  if (HARMLESS_DEVICES.test(path)) return { risk: "config_mutation", reason: `${verb} the device ${path}` };
  return { risk: "config_mutation", reason: `${verb} ${path}` };
}

/** The risk of removing `target` (rm, mv's source, unlink). */
export function removeEffect(target: Word, cwd: string | undefined, recursive: boolean): Effect {
  const path = resolvePath(target, cwd);
  if (path === undefined) return { risk: "destructive", reason: `removes \`${target.text}\`, a path only known when it runs` };
  if (isTemporaryPath(path)) return { risk: "config_mutation", reason: `removes temporary ${path}` };
  if (recursive) return { risk: "destructive", reason: `removes ${path} and everything under it` };
  if (isBlockDevice(path) || isVitalFile(path) || isSystemTree(path))
    return { risk: "destructive", reason: `removes ${path}, which the host needs` };
  return { risk: "config_mutation", reason: `removes ${path}` };
}

export function redirectEffect(r: Redirect, cwd: string | undefined): Effect | undefined {
  switch (r.op) {
    case "<<":
    case "<<-":
    case "<<<":
    case "<&":
      return undefined;
    case "<":
      return couldBeSecret(r.target, cwd) ? { risk: "config_mutation", reason: `reads ${r.target.text}, a secret store` } : undefined;
    case ">&":
      // `>&2`, `2>&1`: duplicating a descriptor; `>&file` writes a file.
      if (/^(\d+|-)$/.test(r.target.text)) return undefined;
      return writeEffect(r.target, cwd, "redirects output to");
    default:
      return writeEffect(r.target, cwd, "redirects output to");
  }
}
