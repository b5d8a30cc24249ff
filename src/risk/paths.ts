// What a path means for risk: a temporary path (losing it loses nothing), a
// block device (writing onto it loses a disk), a file the system needs to
// boot or log in. Invariant: a path whose value is only known at run time
// (a variable, a glob, a relative path) is never treated as temporary.
import { posix } from "node:path";
import type { Risk } from "../db/schema.js";
import type { Redirect, Word } from "./shell-words.js";

const HARMLESS_DEVICES = /^\/dev\/(null|zero|full|u?random|stdout|stderr|stdin|tty|fd\/\d+|pts\/\d+|console|kmsg)$/;
const BLOCK_DEVICE =
  /^\/dev\/(sd[a-z]+\d*|hd[a-z]+\d*|vd[a-z]+\d*|xvd[a-z]+\d*|nvme\d+(n\d+(p\d+)?)?|mmcblk\d+(p\d+)?|md\d+|dm-\d+|zd\d+|loop\d+|disk\/.+|mapper\/.+|zvol\/.+|[a-z0-9_-]+\/[a-z0-9_.-]+|sr\d+|nbd\d+|rbd\d+)$/;
/** Files whose truncation stops a host from booting or anyone from logging in. */
const VITAL_FILES =
  /^\/(etc\/(passwd|shadow|group|gshadow|fstab|sudoers|crypttab|default\/grub|network\/interfaces|hosts|pve\/.+)|boot\/.+)$/;

export function normalizedPath(word: Word): string | undefined {
  if (word.dynamic || !word.text.startsWith("/")) return undefined;
  return posix.normalize(word.text);
}

export function isTemporaryPath(word: Word): boolean {
  const p = normalizedPath(word);
  return p !== undefined && /^\/(tmp|var\/tmp|run\/user\/\d+\/tmp|dev\/shm)\/[^/]/.test(p);
}

export function isHarmlessDevice(word: Word): boolean {
  const p = normalizedPath(word);
  return p !== undefined && HARMLESS_DEVICES.test(p);
}

export function isBlockDevice(word: Word): boolean {
  const p = normalizedPath(word);
  return p !== undefined && !HARMLESS_DEVICES.test(p) && BLOCK_DEVICE.test(p);
}

export function isVitalFile(word: Word): boolean {
  const p = normalizedPath(word);
  return p !== undefined && VITAL_FILES.test(p);
}

/** The risk of writing to `target` (tee, cp, dd of=, a redirection); undefined if none. */
export function writeRisk(target: Word, truncates: boolean): { risk: Risk; reason: string } | undefined {
  if (isHarmlessDevice(target)) return undefined;
  if (isBlockDevice(target)) return { risk: "destructive", reason: `writes onto the block device ${target.text}` };
  if (target.text.startsWith("/dev/")) return { risk: "config_mutation", reason: `writes to the device ${target.text}` };
  if (truncates && isVitalFile(target)) return { risk: "destructive", reason: `overwrites ${target.text}, which the host needs` };
  return { risk: "config_mutation", reason: `writes to ${target.text}` };
}

export function redirectRisk(r: Redirect): { risk: Risk; reason: string } | undefined {
  switch (r.op) {
    case "<":
    case "<<":
    case "<<-":
    case "<<<":
    case "<&":
      return undefined;
    case ">&":
      // `>&2`, `2>&1`: duplicating a descriptor; `>&file` writes a file.
      if (/^(\d+|-)$/.test(r.target.text)) return undefined;
      return writeRisk(r.target, true);
    case ">>":
    case "&>>":
      return writeRisk(r.target, false);
    default:
      return writeRisk(r.target, true);
  }
}
