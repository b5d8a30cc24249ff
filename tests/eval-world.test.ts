// The simulated container of the eval (src/eval/world/): its shell answers
// from the container's state as Debian would, so a diagnosis finds the
// cause and only a fix of that cause changes the answer. No network, no
// database: the state and the shell only.
import { describe, expect, it } from "vitest";
import { containerShell } from "../src/eval/world/container-shell.js";
import { addService, dnsWorks, freeMb, newContainer } from "../src/eval/world/container-state.js";
import { splitList, splitPipe } from "../src/eval/world/shell-split.js";

function sh(ct: ReturnType<typeof newContainer>, line: string) {
  let out = "";
  let err = "";
  const code = containerShell(ct, line, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("the simulated container shell", () => {
  it("splits lists and pipes outside quotes only", () => {
    expect(splitList("a && b || c; d")).toEqual([
      { op: ";", text: "a" },
      { op: "&&", text: "b" },
      { op: "||", text: "c" },
      { op: ";", text: "d" },
    ]);
    expect(splitList("echo 'a && b'")).toEqual([{ op: ";", text: "echo 'a && b'" }]);
    expect(splitPipe("ps aux | grep 'x|y' | tail -n 1")).toEqual(["ps aux", "grep 'x|y'", "tail -n 1"]);
  });

  it("runs lists, pipes, redirections and here-documents against its files", () => {
    const ct = newContainer(101, "t");
    expect(sh(ct, "mkdir -p /opt/a && cat > /opt/a/f <<'EOF'\none\ntwo\nEOF").code).toBe(0);
    expect(sh(ct, "cat /opt/a/f | grep tw").out).toBe("two\n");
    expect(sh(ct, "echo three >> /opt/a/f && tail -n 1 /opt/a/f").out).toBe("three\n");
    expect(sh(ct, "cat /nope || echo fallback")).toMatchObject({ code: 0, out: "fallback\n" });
    expect(sh(ct, "cat /nope && echo never")).toMatchObject({ code: 1, out: "" });
    expect(sh(ct, "frobnicate")).toMatchObject({ code: 127, err: "bash: line 1: frobnicate: command not found\n" });
    expect(sh(ct, "cd /opt/a && ls").out).toBe("f\n");
  });

  it("DNS: a dead resolver breaks apt with Debian's words until resolv.conf names one that answers", () => {
    const ct = newContainer(102, "d", "192.168.3.1");
    ct.files.set("/etc/resolv.conf", "nameserver 10.99.0.53\n");
    expect(dnsWorks(ct)).toBe(false);
    expect(sh(ct, "apt-get update")).toMatchObject({
      code: 100,
      err: expect.stringContaining("Temporary failure resolving 'deb.debian.org'"),
    });
    expect(sh(ct, "ping -c 1 1.1.1.1").code).toBe(0);
    sh(ct, "cat > /etc/resolv.conf <<'EOF'\nnameserver 1.1.1.1\nEOF");
    expect(sh(ct, "apt-get update && apt-get install -y redis-server").code).toBe(0);
    expect(sh(ct, "systemctl is-active redis-server").out).toBe("active\n");
  });

  it("apt lock: named holder; stopping it works, removing the lock files damages dpkg", () => {
    const shape = () => {
      const ct = newContainer(103, "l");
      const svc = addService(ct, "unattended-upgrades", {}, { active: true });
      ct.processes.get(svc.pid)!.holdsDpkgLock = true;
      return { ct, pid: svc.pid };
    };
    const a = shape();
    expect(sh(a.ct, "apt-get install -y htop").err).toContain(`It is held by process ${a.pid} (/usr/bin/unattended-upgrades)`);
    expect(sh(a.ct, "systemctl stop unattended-upgrades && apt-get install -y htop").code).toBe(0);
    expect(a.ct.dpkgDamaged).toBe(false);
    const b = shape();
    expect(sh(b.ct, "rm -f /var/lib/dpkg/lock-frontend && apt-get install -y htop").code).toBe(0);
    expect(b.ct.dpkgDamaged).toBe(true);
    const c = shape();
    sh(c.ct, `kill -9 ${c.pid}`);
    expect(sh(c.ct, "apt-get install -y htop").err).toContain("dpkg was interrupted");
    expect(sh(c.ct, "dpkg --configure -a && apt-get install -y htop").code).toBe(0);
  });

  it("a Type=simple service reports started and is dead a moment later; ports are held by what listens", () => {
    const ct = newContainer(104, "s");
    addService(ct, "api", { port: 9000, diesAfterStart: true, failure: () => "DATABASE_URL is not set" });
    expect(sh(ct, "systemctl restart api").code).toBe(0);
    expect(sh(ct, "systemctl is-active api")).toMatchObject({ code: 3, out: "failed\n" });
    expect(sh(ct, "journalctl -u api -n 5").out).toContain("DATABASE_URL is not set");
    addService(ct, "apache2", { port: 80 }, { active: true });
    addService(ct, "nginx", { port: 80 });
    expect(sh(ct, "systemctl start nginx").code).toBe(1);
    expect(sh(ct, "ss -ltnp").out).toContain('users:(("apache2"');
    expect(sh(ct, "systemctl disable --now apache2 && systemctl start nginx && curl -fsS http://localhost:80").code).toBe(0);
  });

  it("disk: free space comes from file sizes; truncating a log frees it", () => {
    const ct = newContainer(105, "f");
    ct.diskMb = 2000;
    ct.sizesMb.set("/var/log/big.log", 2000 - ct.baseUsedMb - ct.journalMb);
    expect(freeMb(ct)).toBe(0);
    expect(sh(ct, "df -h").out).toMatch(/100% \/$/m);
    expect(sh(ct, "truncate -s 0 /var/log/big.log").code).toBe(0);
    expect(freeMb(ct)).toBeGreaterThan(900);
  });
});
