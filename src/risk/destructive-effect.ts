// What a destructive command does, in plain words, for the card the
// operator decides on ("deletes container 100 and its disks"). Pure, and
// deliberately modest: it names the first destructive act it recognizes in
// the command line, and otherwise says what "destructive" means here.
// Invariant: it only describes; the classifier (classify.ts) decides risk,
// and a command it cannot describe still gets the general warning.

const RULES: { re: RegExp; say: (m: RegExpExecArray, target: string) => string }[] = [
  { re: /\bpct\s+destroy\s+(\d+)/, say: (m) => `deletes container ${m[1]} and its disks` },
  {
    re: /\bpct\s+rollback\s+(\d+)\s+(\S+)/,
    say: (m) => `puts container ${m[1]} back to snapshot ${m[2]}: every change made on it since that snapshot is lost`,
  },
  {
    re: /\bqm\s+rollback\s+(\d+)\s+(\S+)/,
    say: (m) => `puts virtual machine ${m[1]} back to snapshot ${m[2]}: every change made on it since that snapshot is lost`,
  },
  {
    re: /\b(?:pct|qm)\s+delsnapshot\s+(\d+)\s+(\S+)/,
    say: (m) => `deletes snapshot ${m[2]} of guest ${m[1]}: it can no longer be rolled back to`,
  },
  { re: /\bqm\s+destroy\s+(\d+)/, say: (m) => `deletes virtual machine ${m[1]} and its disks` },
  { re: /\bzfs\s+destroy\s+(?:-\S+\s+)*(\S+)/, say: (m) => `deletes ZFS dataset ${m[1]} and everything stored in it` },
  { re: /\bzpool\s+destroy\s+(?:-\S+\s+)*(\S+)/, say: (m) => `deletes ZFS pool ${m[1]} and all its data` },
  { re: /\blvremove\s+(?:-\S+\s+)*(\S+)/, say: (m) => `deletes logical volume ${m[1]} and its data` },
  { re: /\bwipefs\b.*?(\/dev\/\S+)/, say: (m) => `erases the filesystem signatures on ${m[1]}, making its data unreadable` },
  { re: /\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*(\S+)/, say: (m) => `formats ${m[1]}, erasing what is on it` },
  { re: /\bdd\b.*\bof=(\/dev\/\S+)/, say: (m) => `overwrites the device ${m[1]}, erasing what is on it` },
  {
    re: /\bdocker\s+volume\s+(?:rm|remove|prune)\b\s*(.*)/,
    say: (m) => `deletes docker volume${m[1]?.trim() ? ` ${m[1].trim()}` : "s"} and the data in them`,
  },
  { re: /\bdrop\s+database\s+(?:if\s+exists\s+)?["`]?(\w+)/i, say: (m) => `drops the database ${m[1]} and all its data` },
  { re: /\brm\s+(?:-\S*[rR]\S*\s+)+(?:-\S+\s+)*(\S+)/, say: (m) => `deletes ${m[1]} and everything under it` },
  { re: /\b(?:reboot|systemctl\s+reboot)\b/, say: (_m, t) => `reboots ${t}: everything running on it is down until it is back` },
  {
    re: /\b(?:shutdown|poweroff|halt|systemctl\s+poweroff)\b/,
    say: (_m, t) => `shuts ${t} down: everything on it stays down until someone powers it on`,
  },
];

export function destructiveEffect(command: string, target: string): string {
  for (const { re, say } of RULES) {
    const m = re.exec(command);
    if (m) return say(m, target);
  }
  return `loses data or availability on ${target} in a way a retry cannot undo`;
}
