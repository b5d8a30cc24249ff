// The read-only allowlist and the wrappers, as properties: adding an option
// that writes or runs a program to any allowlisted shape never leaves it
// read_only, and every wrapper in every spelling passes a destructive inner
// command through as destructive.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyCommand } from "../src/risk/classify.js";
import { READ_ONLY_SHAPES } from "../src/risk/read-only-shapes.js";

/** A read-only invocation of every shape: its name, or name and first subcommand, or a listed example. */
const EXAMPLES: Record<string, string> = {
  top: "top -b -n 1",
  crontab: "crontab -l",
  fdisk: "fdisk -l",
  sfdisk: "sfdisk -l",
  parted: "parted -l",
  mdadm: "mdadm --detail /dev/md0",
  swapon: "swapon --show",
  service: "service nginx status",
  awk: "awk '{print $1}' /var/log/syslog",
  gawk: "gawk '{print $1}' /var/log/syslog",
  mawk: "mawk '{print $1}' /var/log/syslog",
  sed: "sed -n '1,20p' /etc/fstab",
  jq: "jq .name /tmp/x.json",
  nc: "nc -z localhost 22",
  wget: "wget -qO- http://localhost:8080",
  iptables: "iptables -L -n",
  ip6tables: "ip6tables -L -n",
  psql: "psql -c 'select 1'",
  mysql: "mysql -e 'select 1'",
  "apt-get": "apt-get -s upgrade",
  dpkg: "dpkg -l",
  tar: "tar -tf /tmp/x.tar",
  find: "find /etc -name '*.conf'",
  dd: "dd if=/dev/zero bs=1 count=1",
  ip: "ip addr",
  cd: "cd /tmp",
  ":": ": x",
};

function baseCommands(): string[] {
  const out: string[] = [];
  for (const [name, shape] of Object.entries(READ_ONLY_SHAPES)) {
    if (EXAMPLES[name]) out.push(EXAMPLES[name]);
    else if (shape.sub) {
      for (const sub of Object.keys(shape.sub).slice(0, 3)) out.push(sub ? `${name} ${sub}` : name);
    } else out.push(name);
  }
  return out.filter((c) => classifyCommand(c).risk === "read_only");
}

/** Words that write or run, whatever command they are given to. */
const WRITE_OR_EXEC = [
  "--output=/etc/passwd",
  "--output-file=/tmp/x",
  "--exec=reboot",
  "--pre=reboot",
  "--to-command=reboot",
  "--use-compress-program=reboot",
  "--compress-program=reboot",
  "--config=/tmp/evil",
  "--rsh=reboot",
  "--upload-file=/etc/shadow",
  "--in-place",
  "--delete",
  "--remove-files",
  "--ext-diff",
  "--exec-path=/tmp",
  "--checkpoint-action=exec=reboot",
  "--log-file=/tmp/x",
  "--dump-header=/etc/passwd",
  "--cookie-jar=/etc/passwd",
  "--script=/tmp/x",
  "--command=reboot",
  "--eval=reboot",
  "--pager=reboot",
  "--editor=reboot",
  "--kill",
  "--write=/tmp/x",
  "--write-out=%output{/etc/passwd}",
  "> /etc/passwd",
  ">> /tmp/out",
  "2>/tmp/err",
  "&> /dev/sda",
  ">|/tmp/x",
  "$(reboot)",
  "`reboot`",
  "<(reboot)",
  "| sh",
  "| bash -s",
  "| python3",
  "| sudo sh",
  "| xargs reboot",
  "; reboot",
  "&& rm -rf /srv",
];

/** Offsets of the spaces between shell words (not inside quotes), and the end. */
function wordBoundaries(line: string): number[] {
  const cuts: number[] = [];
  let quote = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === "'" || c === '"') quote = c;
    else if (c === " ") cuts.push(i);
  }
  cuts.push(line.length);
  return cuts;
}

describe("the read-only allowlist", () => {
  const bases = baseCommands();

  it("has a read-only example for nearly every shape", () => {
    expect(bases.length).toBeGreaterThanOrEqual(Object.keys(READ_ONLY_SHAPES).length);
  });

  it("never stays read_only when an option that writes or runs is added anywhere", () => {
    fc.assert(
      fc.property(fc.constantFrom(...bases), fc.constantFrom(...WRITE_OR_EXEC), fc.nat(), (base, extra, at) => {
        // Right after the name, after a subcommand, or at the end: where an option goes (not where an option's value goes).
        const all = wordBoundaries(base);
        const cuts = [all[0]!, all[1] ?? all[0]!, all[all.length - 1]!];
        const cut = cuts[at % cuts.length]!;
        const line = `${base.slice(0, cut)} ${extra} ${base.slice(cut)}`;
        expect(classifyCommand(line).risk, line).not.toBe("read_only");
      }),
      { numRuns: 3000 },
    );
  });

  it("every shape says why it cannot write or execute", () => {
    for (const [name, shape] of Object.entries(READ_ONLY_SHAPES)) expect(shape.why.length, name).toBeGreaterThan(3);
  });
});

/** Every wrapper of issue 12, in several spellings; `{}` is the command it runs. */
const WRAPPED = [
  "sudo {}",
  "sudo -u root {}",
  "sudo -E -- {}",
  "sudo -i {}",
  "env {}",
  "env -i {}",
  "env LANG=C {}",
  "env -S '{}'",
  "nice {}",
  "nice -n 5 {}",
  "ionice -c3 {}",
  "nohup {}",
  "time {}",
  "time -p {}",
  "timeout 5 {}",
  "timeout -s KILL 5 {}",
  "stdbuf -oL {}",
  "setsid {}",
  "setsid -f {}",
  "watch {}",
  "watch -n 1 {}",
  "flock /tmp/l {}",
  "flock /tmp/l -c '{}'",
  "runuser -u root -- {}",
  "runuser -l root -c '{}'",
  "su -c '{}'",
  "su - root -c '{}'",
  "doas {}",
  "nsenter -t 1 -m {}",
  "nsenter -a -t 1 -- {}",
  "chroot /srv/root {}",
  "systemd-run {}",
  "systemd-run --scope {}",
  "busybox {}",
  "ip netns exec ns1 {}",
  "lxc-attach -n 100 -- {}",
  "pct exec 100 -- {}",
  "qm guest exec 100 -- {}",
  "docker exec c {}",
  "podman exec -it c {}",
  "docker run -v /:/host alpine {}",
  "kubectl exec p -- {}",
  "ssh host {}",
  "ssh host '{}'",
  "ssh -p 22 root@host -- {}",
  "bash -c '{}'",
  "sh -c '{}'",
  "bash -lc '{}'",
  "echo x | xargs {}",
  "echo x | xargs -r -n1 {}",
  "command {}",
  "exec {}",
  "eval '{}'",
  "unshare -m {}",
  "tmux new -d '{}'",
  "screen -dm {}",
  "strace -f {}",
  "gosu root {}",
  "trap '{}' EXIT",
  "echo '{}' | sh",
  "echo '{}' | bash",
  "bash <<< '{}'",
  "echo '{}' | ssh host",
  "echo '{}' | at now",
  "find /tmp -maxdepth 0 -exec {} ;",
];
const DESTRUCTIVE_INNER = [
  "reboot",
  "rm -rf /srv",
  "dd if=/dev/zero of=/dev/sda",
  "pct destroy 100",
  "mkfs.ext4 /dev/sdb",
  "systemctl poweroff",
  "zfs destroy tank",
];

describe("wrappers", () => {
  it("pass a destructive command through as destructive, in every spelling", () => {
    fc.assert(
      fc.property(fc.constantFrom(...WRAPPED), fc.constantFrom(...DESTRUCTIVE_INNER), (wrapper, inner) => {
        const line = wrapper.replace("{}", inner).replace(/ ;$/, " \\;");
        expect(classifyCommand(line).risk, line).toBe("destructive");
      }),
      { numRuns: 1500 },
    );
  });

  it("keep a read-only command read-only when their own options are known", () => {
    for (const line of [
      "sudo -u postgres psql -c 'select 1'",
      "timeout 10 curl -s http://localhost",
      "pct exec 105 -- df -h",
      "ssh pve2 uptime",
      "env LANG=C df -h",
      "watch -n 5 docker ps",
    ])
      expect(classifyCommand(line).risk, line).toBe("read_only");
  });
});
