// The risk classifier against commands a homelab operator really types:
// each row is a command line and the risk it must get. The highest part of
// a line wins, unknown commands mutate, and unparseable lines never read.
import { describe, expect, it } from "vitest";
import type { Risk } from "../src/db/schema.js";
import { classifyCommand } from "../src/risk/classify.js";
import { attackKinds, diagnostics, issueExamples, secretStores } from "./fixtures/risk-rows.js";

const R: Risk = "read_only";
const C: Risk = "config_mutation";
const D: Risk = "destructive";

const table: [string, Risk][] = [
  // apt / dpkg
  ["apt update", C],
  ["apt-get update && apt-get install -y nginx", C],
  ["apt list --installed", R],
  ["apt list --upgradable 2>/dev/null", R],
  ["apt-cache policy docker-ce", R],
  ["apt show nginx", R],
  ["apt-get -s upgrade", R],
  ["DEBIAN_FRONTEND=noninteractive apt-get -y full-upgrade", C],
  ["apt purge -y apache2", C],
  ["apt autoremove -y", C],
  ["dpkg -l | grep docker", R],
  ["dpkg -i /tmp/pkg.deb", C],
  ["dpkg-query -W -f='${Version}' nginx", R],
  ["sudo apt install -y curl ca-certificates", C],
  // systemctl / services / logs
  ["systemctl status nginx", R],
  ["systemctl is-active docker", R],
  ["systemctl list-units --failed", R],
  ["systemctl --no-pager status pveproxy", R],
  ["systemctl cat ssh.service", R],
  ["systemctl restart nginx", C],
  ["systemctl enable --now docker", C],
  ["systemctl daemon-reload", C],
  ["systemctl stop pve-cluster", C],
  ["systemctl mask sleep.target", C],
  ["systemctl reboot", D],
  ["systemctl poweroff", D],
  ["service nginx status", R],
  ["service nginx reload", C],
  ["journalctl -u nginx --since '1 hour ago' --no-pager", R],
  ["journalctl -xe | tail -n 50", R],
  ["journalctl -b -1 -p err", R],
  ["journalctl --vacuum-time=7d", C],
  ["journalctl -fu docker", R],
  // docker
  ["docker ps -a", R],
  ["docker logs --tail 100 nginx", R],
  ["docker inspect nginx | jq '.[0].State'", R],
  ["docker images", R],
  ["docker stats --no-stream", R],
  ["docker volume ls", R],
  ["docker network inspect bridge", R],
  ["docker restart nginx", C],
  ["docker rm -f nginx", C],
  ["docker run -d --name whoami -p 8000:80 traefik/whoami", C],
  ["docker pull nginx:latest", C],
  ["docker volume rm pgdata", D],
  ["docker volume prune -f", D],
  ["docker system prune -af", C],
  ["docker system prune -af --volumes", D],
  ["docker exec -it db psql -U postgres -c 'DROP DATABASE app'", D],
  ["docker exec web cat /etc/nginx/nginx.conf", R],
  ["docker exec -u root web apt-get install -y vim", C],
  ["docker compose ps", R],
  ["docker compose logs -f --tail=50 app", R],
  ["docker compose up -d", C],
  ["docker compose -f /opt/app/compose.yml pull", C],
  ["docker compose down", C],
  ["docker compose down -v", D],
  ["docker-compose restart web", C],
  ["cd /opt/immich && docker compose up -d", C],
  // Proxmox
  ["pct list", R],
  ["pct status 105", R],
  ["pct config 105", R],
  ["pct start 105", C],
  ["pct stop 105", C],
  ["pct set 105 -memory 2048", C],
  ["pct create 110 local:vztmpl/debian-12-standard_12.2-1_amd64.tar.zst --hostname web", C],
  ["pct destroy 105", D],
  ["pct destroy 105 --purge", D],
  ["pct rollback 105 before-upgrade", D],
  ["pct snapshot 105 before-upgrade", C],
  ["pct exec 105 -- df -h", R],
  ["pct exec 105 -- bash -lc 'apt-get update'", C],
  ["pct exec 105 -- bash -lc 'rm -rf /var/lib/docker'", D],
  ["pct exec 105 -- systemctl status nginx", R],
  ["qm list", R],
  ["qm config 100", R],
  ["qm start 100", C],
  ["qm shutdown 100", C],
  ["qm destroy 100 --purge", D],
  ["qm rollback 100 snap1", D],
  ["pvesh get /cluster/nextid", R],
  ["pvesh get /nodes/pve1/lxc --output-format json", R],
  ["pvesh create /nodes/pve1/lxc -vmid 120", C],
  ["pvesh delete /nodes/pve1/lxc/120", D],
  ["pvecm status", R],
  ["pvesm status", R],
  ["pvesm free local-lvm:vm-100-disk-0", D],
  ["pveam update", C],
  ["pveam available --section system", R],
  ["pveversion -v", R],
  ["vzdump 105 --storage local --mode snapshot", C],
  // ZFS / LVM / disks
  ["zfs list -t snapshot", R],
  ["zfs get compression rpool/data", R],
  ["zfs snapshot rpool/data/subvol-105-disk-0@pre", C],
  ["zfs set compression=lz4 rpool/data", C],
  ["zfs destroy rpool/data/subvol-105-disk-0", D],
  ["zfs destroy -r rpool/data@autosnap", D],
  ["zfs rollback rpool/data@pre", D],
  ["zpool status -x", R],
  ["zpool list", R],
  ["zpool scrub rpool", C],
  ["zpool destroy tank", D],
  ["zpool create -f tank mirror /dev/sdb /dev/sdc", D],
  ["lvs", R],
  ["vgs -o +vg_free", R],
  ["pvs", R],
  ["lvcreate -L 10G -n data pve", C],
  ["lvextend -r -L +5G /dev/pve/data", C],
  ["lvremove -y /dev/pve/vm-100-disk-0", D],
  ["lvresize -L -5G /dev/pve/data", D],
  ["vgremove pve", D],
  ["pvcreate /dev/sdb", D],
  ["lsblk -f", R],
  ["blkid", R],
  ["fdisk -l", R],
  ["fdisk /dev/sdb", D],
  ["parted /dev/sdb print", R],
  ["parted -s /dev/sdb mklabel gpt", D],
  ["sgdisk --zap-all /dev/sdb", D],
  ["smartctl -a /dev/sda", R],
  ["wipefs /dev/sdb", R],
  ["wipefs -a /dev/sdb", D],
  ["mkfs.ext4 /dev/sdb1", D],
  ["mkfs -t xfs /dev/sdc", D],
  ["mkswap /dev/sdb2", D],
  ["dd if=/dev/zero of=/dev/sda bs=1M count=100", D],
  ["dd if=debian.iso of=/dev/sdb bs=4M status=progress", D],
  ["dd if=/dev/zero of=/tmp/test.img bs=1M count=100", C],
  ["dd if=/dev/sda bs=512 count=1 | xxd", R],
  ["blkdiscard /dev/nvme1n1", D],
  ["df -h", R],
  ["du -sh /var/lib/docker/*", R],
  ["mount | grep nfs", R],
  ["mount -a", C],
  ["umount /mnt/backup", C],
  // files
  ["rm -rf /tmp/build", C],
  ["rm -rf /var/lib/docker", D],
  ["rm -rf /", D],
  ["rm -rf /tmp/../etc", D],
  ["rm -rf $DIR/cache", D],
  ["rm -rf ./node_modules", D],
  ["rm /etc/nginx/sites-enabled/default", C],
  ["sudo rm -rf --no-preserve-root /", D],
  ["find /var/log -name '*.gz' -delete", D],
  ["find /tmp/scratch -mtime +7 -delete", C],
  ["find /etc -name '*.conf'", R],
  ["find /srv -type f -exec rm -rf {} +", D],
  // find runs what -exec names: the allowlist keeps find only without it (issue 12).
  ["find / -xdev -size +1G -exec ls -lh {} \\;", C],
  ["ls -la /etc/pve/lxc", R],
  ["cat /etc/os-release", R],
  ["tail -n 200 /var/log/syslog", R],
  ["grep -r 'error' /var/log/nginx/ | head", R],
  ["less /var/log/pveproxy/access.log", R],
  ["head -c 100 /dev/urandom | base64", R],
  ["sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config", C],
  ["sed -n '1,20p' /etc/fstab", R],
  ["awk '{print $1}' /var/log/nginx/access.log | sort | uniq -c | sort -rn | head", R],
  ["echo 'nameserver 1.1.1.1' > /etc/resolv.conf", C],
  ["echo 'deb http://deb.debian.org/debian bookworm main' >> /etc/apt/sources.list", C],
  ["echo '' > /etc/fstab", D],
  ["echo x > /dev/sda", D],
  ["cat /dev/zero > /dev/nvme0n1", D],
  ["cat /etc/hostname > /dev/null", R],
  ["echo hello | tee /etc/motd", C],
  ["echo 1 | sudo tee /proc/sys/net/ipv4/ip_forward", C],
  ["cat > /etc/systemd/system/app.service <<EOF\n[Unit]\nDescription=app\nEOF", C],
  ["cp /etc/fstab /etc/fstab.bak", C],
  ["chmod 600 /root/.ssh/authorized_keys", C],
  ["chown -R www-data:www-data /var/www", C],
  ["mkdir -p /opt/app && cd /opt/app", C],
  ["tar -tzf backup.tar.gz | head", R],
  ["tar -czf /tmp/etc.tgz /etc", C],
  ["shred -u secrets.txt", D],
  ["truncate -s 0 /var/log/syslog", C],
  // network / firewall
  ["ip a", R],
  ["ip addr show vmbr0", R],
  ["ip route", R],
  ["ip link set eth0 up", C],
  ["ip route add default via 192.168.1.1", C],
  ["ss -tlnp", R],
  ["netstat -tulpn | grep 443", R],
  ["ping -c 3 1.1.1.1", R],
  ["dig +short example.com", R],
  ["curl -fsS http://localhost:8080/healthz", R],
  ["curl -I https://example.com", R],
  ["curl -X POST http://localhost:9000/api/reload", C],
  ["curl -fsSL https://get.docker.com | sh", C],
  ["curl -fsSL https://get.docker.com -o get-docker.sh && sh get-docker.sh", C],
  ["wget -qO- https://example.com/install.sh | bash", C],
  ["wget https://example.com/file.iso", C],
  ["iptables -L -n -v", R],
  ["iptables -S", R],
  ["iptables -A INPUT -p tcp --dport 22 -j ACCEPT", C],
  ["iptables -F", C],
  ["iptables-save > /etc/iptables/rules.v4", C],
  ["nft list ruleset", R],
  ["nft add rule inet filter input tcp dport 80 accept", C],
  ["nft flush ruleset", C],
  ["ufw status verbose", R],
  ["ufw allow 443/tcp", C],
  // power
  ["reboot", D],
  ["sudo reboot now", D],
  ["shutdown -h now", D],
  ["shutdown -r +5", D],
  ["shutdown -c", C],
  ["poweroff", D],
  ["init 6", D],
  ["sleep 5 && reboot", D],
  // look-through
  ["sudo -u postgres psql -c 'SELECT version()'", R],
  ["sudo -u postgres psql -c 'DROP DATABASE nextcloud'", D],
  ["env LANG=C df -h", R],
  ["timeout 10 curl -s http://localhost", R],
  ["nohup ./backup.sh &", C],
  ["bash -c 'uptime; free -m'", R],
  ["sh -c 'rm -rf /srv/data'", D],
  ['bash -lc "systemctl status nginx | head -5"', R],
  ["ssh root@pve2 'qm list'", R],
  ["ssh pve2 zfs destroy tank/data", D],
  ["ssh -p 2222 root@nas 'uptime'", R],
  // A command substitution runs code to build the words: at least config_mutation (DESIGN.md "Risk").
  ["echo $(whoami)", C],
  ["echo $(rm -rf /srv)", D],
  ["echo `reboot`", D],
  ["diff <(ls /a) <(ls /b)", C],
  ["ls /var/run/docker.sock || echo missing", R],
  ["(cd /etc && ls)", R],
  ["for f in /etc/pve/lxc/*.conf; do grep hostname $f; done", R],
  ["if systemctl is-active -q nginx; then echo up; else systemctl start nginx; fi", C],
  ["ls | xargs rm -rf", D],
  ["cat hosts.txt | xargs -n1 ping -c1", R],
  ["watch -n 5 docker ps", R],
  ["uptime # reboot", R],
  ["crontab -l", R],
  ["date -u +%FT%T", R],
  ["date -s '2026-01-01 00:00'", C],
  ["crontab -r", D],
  ["redis-cli FLUSHALL", D],
  ["redis-cli info memory", R],
  ["git -C /opt/app status", R],
  ["git pull", C],
  ["git reset --hard origin/main", D],
  // unknown and unparseable
  ["frobnicate --all", C],
  ["./install.sh", C],
  ["$CMD --help", C],
  ["$SUDO rm -rf /var/lib/docker", D],
  ["$SUDO systemctl status nginx", C],
  ["$rm -rf /", D],
  ["echo 'unterminated", C],
  ['cat /etc/hosts | grep "oops', C],
  ["echo 'unterminated && mkfs.ext4 /dev/sda", D],
  ["(ls", C],
  ["case $x in a) reboot;; esac", D],
  ["", R],
];

const allRows: [string, Risk][] = [...table, ...issueExamples, ...attackKinds, ...diagnostics, ...secretStores];

describe("classifyCommand", () => {
  it("has at least 400 rows, the first table kept whole", () => {
    expect(table.length).toBeGreaterThanOrEqual(252);
    expect(allRows.length).toBeGreaterThanOrEqual(400);
  });

  it.each(allRows)("%j is %s", (command, risk) => {
    const got = classifyCommand(command);
    expect({ command, risk: got.risk, reasons: got.reasons }).toMatchObject({ command, risk });
    expect(got.reasons.length).toBeGreaterThan(0);
  });

  it("explains why, naming the part that decided", () => {
    const got = classifyCommand("df -h && pct destroy 105");
    expect(got.risk).toBe("destructive");
    expect(got.reasons.join(" ")).toMatch(/pct destroy/);
    expect(classifyCommand("frobnicate").reasons.join(" ")).toMatch(/unknown command `frobnicate`/);
  });

  it("never calls an unparseable line read-only", () => {
    for (const line of ["cat '", 'ls "', "ls $(", "ls `", "ls )", "cat <<EOF", "ls >"]) {
      expect(classifyCommand(line).risk, line).not.toBe("read_only");
    }
  });
});

describe("classifyCommand on arbitrary input", () => {
  it("never throws, always answers one of the three risks with a reason", async () => {
    const fc = (await import("fast-check")).default;
    const shellish = fc.constantFrom(
      "'",
      '"',
      "$(",
      ")",
      "`",
      "|",
      "&&",
      ";",
      "<<EOF\n",
      ">",
      "2>&1",
      "rm -rf /",
      "sudo ",
      "bash -c ",
      "\\",
      "\n",
      "{",
      "}",
      "(",
      "case x in",
      "pct exec 1 -- ",
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 20 }), shellish), { maxLength: 12 }).map((p) => p.join("")),
        (line) => {
          const got = classifyCommand(line);
          expect(["read_only", "config_mutation", "destructive"]).toContain(got.risk);
          expect(got.reasons.length).toBeGreaterThan(0);
          // With no quoting, expansion or grouping around it, `rm -rf /` starting a command is destructive.
          if (/^[^'"`\\#${}<>]*$/.test(line) && /(^|[;|&(\n])\s*rm -rf \/(\s|$|[;|&)])/.test(line)) {
            expect(got.risk).toBe("destructive");
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
