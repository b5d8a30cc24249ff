// Scenario: nginx will not start because apache2, left over from an older
// setup, already listens on port 80. Stopping and disabling apache2 (or
// removing it) lets nginx bind; moving nginx to another port does not
// meet the request and fails the check.
import { anyResult, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { addService, listener } from "../world/container-state.js";
import { startSimulatedNode } from "../world/simulated-node.js";

const REQUEST = "nginx in container 207 (proxy) on pve7 will not start. Make nginx serve on port 80.";
const TARGET = "pve7/207";
const plan = [
  { title: "Find why nginx does not start", target: TARGET, command: "systemctl status nginx" },
  { title: "Free port 80", target: TARGET },
  { title: "Start nginx and check port 80", target: TARGET, command: "curl -fsS http://localhost:80" },
];
const on = (say: string, command: string, ok?: () => boolean) => ({ say, input: { target: TARGET, command }, ...(ok ? { ok } : {}) });

export const portTaken: Scenario = {
  id: "port-taken",
  title: "Port already taken",
  request: REQUEST,
  async start() {
    const node = await startSimulatedNode({ nodeName: "pve7", lanGateway: "192.168.7.1" });
    const ct = node.addContainer(207, "proxy", (c) => {
      c.packages.add("nginx").add("apache2");
      addService(c, "apache2", { port: 80, body: "<title>Apache2 Debian Default Page: It works</title>" }, { active: true });
      const nginx = addService(c, "nginx", { port: 80, body: "<title>Welcome to nginx!</title>" });
      nginx.journal.push("nginx[402]: nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)");
    });
    return {
      node,
      check: () =>
        verdict([
          [ct.services.get("nginx")?.active === true, "nginx is not running"],
          [listener(ct, 80)?.name === "nginx", `port 80 is served by ${listener(ct, 80)?.name ?? "nothing"}, not nginx`],
        ]),
    };
  },
  policies: {
    reference: routePolicy(/nginx in container 207/, {
      goal: "nginx serves on port 80 in 207",
      plan,
      steps: [
        on("Starting nginx to see the error.", "systemctl start nginx", () => true),
        on("Address already in use. Who listens on :80?", "ss -ltnp"),
        on("apache2 holds port 80. Stopping and disabling it.", "systemctl disable --now apache2"),
        on("Starting nginx.", "systemctl start nginx"),
        on("Checking port 80.", "curl -fsS http://localhost:80"),
      ],
      done: "Done: nginx serves on :80. apache2 held the port; I stopped and disabled it.",
    }),
    alternate: routePolicy(/nginx in container 207/, {
      goal: "nginx serves on port 80 in 207",
      plan,
      steps: [
        on("Reading nginx's log.", "journalctl -u nginx -n 20 --no-pager"),
        on("Something else has :80.", "netstat -tlnp"),
        on("Removing the leftover apache2.", "apt-get remove -y apache2"),
        on("Starting nginx.", "systemctl restart nginx"),
        on("Checking port 80.", "curl -fsS http://localhost:80"),
      ],
      done: "Done: removed apache2, which held :80; nginx now answers there.",
    }),
    wrong: routePolicy(/nginx in container 207/, {
      goal: "nginx serves on port 80 in 207",
      plan,
      steps: [on("Restarting nginx.", "systemctl restart nginx"), on("Once more.", "systemctl restart nginx")].map(anyResult),
      done: "Done: nginx was restarted.",
    }),
  },
};
