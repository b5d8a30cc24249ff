// Scenario: the TypeType deployment of the demo, on pve1 — a new container,
// Debian's docker.io without the compose plugin, a registry 500 on the first
// `docker compose up`. The node is the deployment double
// (src/demo/deployment-host.ts) as the end-to-end test and `npm run demo`
// use it. Passes when a container on pve1 runs the stack; the alternate
// route first points compose at a wrong path and recovers.
import { type DeploymentScenario, deploymentScenario } from "../../demo/deployment-host.js";
import { CMD, DEPLOY_REQUEST, deploymentPolicy, OSTEMPLATE } from "../../demo/deployment-policy.js";
import { anyResult, type RouteState, type RouteStep, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { startSimulatedNode } from "../world/simulated-node.js";

export const typetype: Scenario = {
  id: "typetype",
  title: "TypeType deployment (docker.io without compose, registry 500)",
  request: DEPLOY_REQUEST,
  async start() {
    const node = await startSimulatedNode({ nodeName: "pve1", shell: false });
    const deployment: DeploymentScenario = deploymentScenario(node.host, { registryFailures: 1, upMs: 100, installMs: 30 });
    return {
      node,
      check() {
        const running = [...node.host.containers.values()].filter((c) => c.status === "running");
        const up = running.filter((c) => deployment.state(c.vmid).stackUp);
        return verdict([
          [running.length > 0, "no container is running on pve1"],
          [up.length > 0, "no container on pve1 runs the TypeType stack (curl :8082 would fail)"],
        ]);
      },
    };
  },
  policies: {
    reference: deploymentPolicy(),
    alternate: deploymentPolicy({ wrongComposePath: "/srv/typetype/compose.yaml" }),
    wrong: routePolicy(/Deploy TypeType/, {
      goal: "TypeType runs on pve1",
      plan: [{ title: "Create a container and install Docker", target: "pve1" }],
      steps: (
        [
          {
            say: "Creating the container.",
            tool: "pct_create",
            input: { node: "pve1", hostname: "typetype", ostemplate: OSTEMPLATE, nesting: true },
          },
          { say: "Installing Docker.", input: (s: RouteState) => ({ target: s.created ?? "typetype", command: CMD.installDocker }) },
        ] satisfies RouteStep[]
      ).map(anyResult),
      done: "Done: TypeType is deployed.",
    }),
  },
};
