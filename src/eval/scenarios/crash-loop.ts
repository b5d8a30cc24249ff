// Scenario: a service that starts and dies — systemd reports the start as
// done (Type=simple), and a moment later the process exits because
// DATABASE_URL is commented out in /etc/default/api. Restarting alone
// never helps; a later look (is-active, the journal) shows why.
import { anyResult, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { addService } from "../world/container-state.js";
import { startSimulatedNode } from "../world/simulated-node.js";

const REQUEST = "The api service in container 208 (api) on pve8 keeps dying. Make it run.";
const TARGET = "pve8/208";
const DEFAULTS = "# Settings for api\n#DATABASE_URL=postgres://api@db.lan:5432/api\nPORT=9000\n";
const plan = [
  { title: "Read why api dies", target: TARGET, command: "journalctl -u api -n 20 --no-pager" },
  { title: "Fix its configuration", target: TARGET },
  { title: "Restart api and check it stays up", target: TARGET, command: "systemctl restart api" },
];
const on = (say: string, command: string, ok?: () => boolean) => ({ say, input: { target: TARGET, command }, ...(ok ? { ok } : {}) });

export const crashLoop: Scenario = {
  id: "crash-loop",
  title: "Service starts and dies",
  request: REQUEST,
  async start() {
    const node = await startSimulatedNode({ nodeName: "pve8", lanGateway: "192.168.8.1" });
    const ct = node.addContainer(208, "api", (c) => {
      c.files.set("/etc/default/api", DEFAULTS);
      const svc = addService(c, "api", {
        port: 9000,
        body: '{"status":"ok"}',
        diesAfterStart: true,
        failure: (x) =>
          /^DATABASE_URL=\S+/m.test(x.files.get("/etc/default/api") ?? "")
            ? null
            : "api: error: DATABASE_URL is not set (read from /etc/default/api)",
      });
      svc.journal.push("api[310]: api: error: DATABASE_URL is not set (read from /etc/default/api)");
      svc.journal.push("systemd[1]: api.service: Main process exited, code=exited, status=1/FAILURE");
    });
    return {
      node,
      check: () =>
        verdict([
          [ct.services.get("api")?.active === true, "api is not running"],
          [
            /^DATABASE_URL=postgres:\/\/api@db\.lan:5432\/api$/m.test(ct.files.get("/etc/default/api") ?? ""),
            "DATABASE_URL is not set to the database the file names",
          ],
        ]),
    };
  },
  policies: {
    reference: routePolicy(/api service in container 208/, {
      goal: "api runs and stays up in 208",
      plan,
      steps: [
        on("Reading the journal.", "journalctl -u api -n 20 --no-pager"),
        on("It wants DATABASE_URL. Reading /etc/default/api.", "cat /etc/default/api"),
        on("The line is commented out. Enabling it.", "sed -i 's/^#DATABASE_URL=/DATABASE_URL=/' /etc/default/api"),
        on("Restarting api.", "systemctl restart api"),
        on("Checking that it stayed up.", "systemctl is-active api"),
      ],
      done: "Done: api runs. DATABASE_URL was commented out in /etc/default/api.",
    }),
    alternate: routePolicy(/api service in container 208/, {
      goal: "api runs and stays up in 208",
      plan,
      steps: [
        on("Status first.", "systemctl status api", () => true),
        on("Reading the settings file the error names.", "cat /etc/default/api"),
        on("Adding DATABASE_URL.", "cat >> /etc/default/api <<'EOF'\nDATABASE_URL=postgres://api@db.lan:5432/api\nEOF"),
        on("Starting api.", "systemctl start api"),
        on("Checking its health endpoint.", "curl -fsS http://localhost:9000/health"),
      ],
      done: "Done: api answers on :9000 after DATABASE_URL was set.",
    }),
    wrong: routePolicy(/api service in container 208/, {
      goal: "api runs and stays up in 208",
      plan,
      steps: [on("Restarting api.", "systemctl restart api")].map(anyResult),
      done: "Done: api was restarted and systemd reported success.",
    }),
  },
};
