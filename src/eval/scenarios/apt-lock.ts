// Scenario: apt-get install fails because unattended-upgrades holds the
// dpkg lock. Stopping the unit (or killing it and repairing dpkg with
// `dpkg --configure -a`) works; removing the lock files while the holder
// runs damages the dpkg database, which the checker rejects.
import { anyResult, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { addService } from "../world/container-state.js";
import { startSimulatedNode } from "../world/simulated-node.js";

const REQUEST = "Install htop in container 205 (tools) on pve5.";
const TARGET = "pve5/205";
const plan = [{ title: "Install htop", target: TARGET, command: "apt-get install -y htop" }];
const on = (say: string, command: string, ok?: () => boolean) => ({ say, input: { target: TARGET, command }, ...(ok ? { ok } : {}) });

export const aptLock: Scenario = {
  id: "apt-lock",
  title: "apt lock held by another process",
  request: REQUEST,
  async start() {
    const node = await startSimulatedNode({ nodeName: "pve5", lanGateway: "192.168.5.1" });
    const ct = node.addContainer(205, "tools", (c) => {
      const svc = addService(c, "unattended-upgrades", {}, { active: true });
      const p = c.processes.get(svc.pid)!;
      p.command = "/usr/bin/python3 /usr/bin/unattended-upgrade --download-only";
      p.holdsDpkgLock = true;
    });
    return {
      node,
      check: () =>
        verdict([
          [ct.packages.has("htop"), "htop is not installed in 205"],
          [!ct.dpkgDamaged, "the dpkg lock was removed while its holder ran: the dpkg database may be damaged"],
          [!ct.dpkgInterrupted, "dpkg was left interrupted (dpkg --configure -a not run)"],
        ]),
    };
  },
  policies: {
    reference: routePolicy(/Install htop/, {
      goal: "htop is installed in 205",
      plan,
      steps: [
        on("Installing htop.", "apt-get install -y htop", () => true),
        on("The dpkg lock is held. Who holds it?", "ps aux | grep unattended"),
        on("unattended-upgrades holds it. Stopping the unit cleanly.", "systemctl stop unattended-upgrades"),
        on("Installing htop again.", "apt-get install -y htop"),
      ],
      done: "Done: htop is installed. unattended-upgrades held the dpkg lock; I stopped it cleanly first.",
    }),
    alternate: routePolicy(/Install htop/, {
      goal: "htop is installed in 205",
      plan,
      steps: [
        on("Installing htop.", "apt-get install -y htop", () => true),
        on("Who holds the lock?", "fuser /var/lib/dpkg/lock-frontend"),
        {
          say: "Ending the holder.",
          input: (s: { results: Array<{ text: string }> }) => ({
            target: TARGET,
            command: `kill -9 ${/lock-frontend: (\d+)/.exec(s.results.at(-1)?.text ?? "")?.[1] ?? "0"}`,
          }),
        },
        on("Repairing dpkg after the interrupted run.", "dpkg --configure -a"),
        on("Installing htop.", "apt-get install -y htop"),
      ],
      done: "Done: htop is installed (after ending the stuck upgrade and repairing dpkg).",
    }),
    wrong: routePolicy(/Install htop/, {
      goal: "htop is installed in 205",
      plan,
      steps: [
        on("Installing htop.", "apt-get install -y htop"),
        on("A stale lock. Removing the lock files.", "rm -f /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock"),
        on("Installing htop.", "apt-get install -y htop"),
      ].map(anyResult),
      done: "Done: htop is installed.",
    }),
  },
};
