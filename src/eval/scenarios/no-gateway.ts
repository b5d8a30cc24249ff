// Scenario: a container with no default route (its net0 lost gw=), so apt
// fails with "Network is unreachable". The fix is a default route through
// the LAN router (192.168.4.1), set persistently with `pct set --net0` or
// at once with `ip route add`; a wrong gateway leaves it offline.
import { anyResult, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { startSimulatedNode } from "../world/simulated-node.js";

const REQUEST = "Container 204 (web) on pve4 cannot reach the internet, so apt fails. Fix its networking and install curl in it.";
const TARGET = "pve4/204";
const plan = [
  { title: "Find why 204 has no route out", target: TARGET, command: "ip route" },
  { title: "Give it a default route through the LAN router", target: "pve4" },
  { title: "Install curl", target: TARGET, command: "apt-get update && apt-get install -y curl" },
];
const on = (target: string, say: string, command: string, ok?: () => boolean) => ({
  say,
  input: { target, command },
  ...(ok ? { ok } : {}),
});

export const noGateway: Scenario = {
  id: "no-gateway",
  title: "No default gateway",
  request: REQUEST,
  async start() {
    const node = await startSimulatedNode({ nodeName: "pve4", lanGateway: "192.168.4.1" });
    const ct = node.addContainer(204, "web", (c) => {
      c.gateway = null;
    });
    return {
      node,
      check: () =>
        verdict([
          [ct.gateway === "192.168.4.1", `the default route of 204 is ${ct.gateway ?? "missing"}, not the LAN router 192.168.4.1`],
          [ct.packages.has("curl"), "curl is not installed in 204"],
        ]),
    };
  },
  policies: {
    reference: routePolicy(/Container 204 \(web\)/, {
      goal: "204 reaches the internet and has curl",
      plan,
      steps: [
        on(TARGET, "Looking at the routes.", "ip route"),
        on("pve4", "No default route. What does the node route through?", "ip route"),
        on(
          "pve4",
          "The LAN router is 192.168.4.1. Setting it as 204's gateway in its config.",
          "pct set 204 --net0 name=eth0,bridge=vmbr0,ip=192.168.4.54/24,gw=192.168.4.1",
        ),
        on(TARGET, "Installing curl.", "apt-get update && apt-get install -y curl"),
      ],
      done: "Done: 204 had no default route; its net0 now has gw=192.168.4.1 and curl is installed.",
    }),
    alternate: routePolicy(/Container 204 \(web\)/, {
      goal: "204 reaches the internet and has curl",
      plan,
      steps: [
        on(TARGET, "Can it reach anything?", "ping -c 1 1.1.1.1", () => true),
        on(TARGET, "Network unreachable: checking addresses.", "ip addr"),
        on(TARGET, "Adding the default route through 192.168.4.1.", "ip route add default via 192.168.4.1"),
        on(TARGET, "Installing curl.", "apt-get update && apt-get install -y curl"),
      ],
      done: "Done: added a default route via 192.168.4.1 and installed curl.",
    }),
    wrong: routePolicy(/Container 204 \(web\)/, {
      goal: "204 reaches the internet and has curl",
      plan,
      steps: [
        on(TARGET, "Adding a default route.", "ip route add default via 192.168.4.254"),
        on(TARGET, "Installing curl.", "apt-get update && apt-get install -y curl"),
      ].map(anyResult),
      done: "Done: 204 has a default route and curl.",
    }),
  },
};
