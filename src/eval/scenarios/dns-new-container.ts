// Scenario: a new container whose DNS is broken — the node hands new
// containers a resolver that no longer answers (10.99.0.53), so apt cannot
// resolve deb.debian.org although the network is fine. The right diagnosis
// (resolv.conf) fixes it from the node (`pct set --nameserver`) or inside
// the container; retrying apt or touching the route does not.
import { anyResult, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { dnsWorks } from "../world/container-state.js";
import { startSimulatedNode } from "../world/simulated-node.js";

const REQUEST = "Create a container named cache on pve3 and install redis-server in it; check that redis runs.";
const OSTEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";
const plan = [
  { title: "Create and start a Debian 12 container cache on pve3", target: "pve3" },
  { title: "Install redis-server", target: "cache", command: "apt-get update && apt-get install -y redis-server" },
  { title: "Check that redis-server is active", target: "cache", command: "systemctl is-active redis-server" },
];
const create = {
  say: "Creating the container.",
  tool: "pct_create" as const,
  input: { node: "pve3", hostname: "cache", ostemplate: OSTEMPLATE },
};
const onCt = (say: string, command: string, ok?: () => boolean) => ({
  say,
  input: (s: { created?: string }) => ({ target: s.created ?? "cache", command }),
  ...(ok ? { ok } : {}),
});

export const dnsNewContainer: Scenario = {
  id: "dns-new-container",
  title: "DNS broken inside a new container",
  request: REQUEST,
  async start() {
    const node = await startSimulatedNode({
      nodeName: "pve3",
      lanGateway: "192.168.3.1",
      onCreate: (ct) => ct.files.set("/etc/resolv.conf", "# from the node's stale template\nnameserver 10.99.0.53\n"),
    });
    return {
      node,
      check() {
        const cache = node.byHostname("cache");
        const redis = cache?.state.services.get("redis-server");
        return verdict([
          [cache !== undefined, "there is no container named cache on pve3"],
          [cache?.record.status === "running", "the cache container is not running"],
          [cache?.state.packages.has("redis-server") === true, "redis-server is not installed in cache"],
          [redis?.active === true, "redis-server is not running in cache"],
          [cache !== undefined && dnsWorks(cache.state), "names still do not resolve inside cache"],
        ]);
      },
    };
  },
  policies: {
    reference: routePolicy(/container named cache/, {
      goal: "A container cache on pve3 runs redis-server",
      plan,
      steps: [
        create,
        onCt("Installing redis-server.", "apt-get update && apt-get install -y redis-server", () => true),
        onCt("apt cannot resolve deb.debian.org. Checking the resolver.", "cat /etc/resolv.conf"),
        {
          say: "The container was given 10.99.0.53, which does not answer. Setting a working resolver from the node.",
          input: (s) => ({ target: "pve3", command: `pct set ${s.createdVmid} --nameserver 192.168.3.1` }),
        },
        onCt("Installing redis-server again.", "apt-get update && apt-get install -y redis-server"),
        onCt("Checking redis.", "systemctl is-active redis-server"),
      ],
      done: "Done: cache runs redis-server. Its resolver (10.99.0.53) did not answer; I set the LAN router 192.168.3.1 with pct set.",
    }),
    alternate: routePolicy(/container named cache/, {
      goal: "A container cache on pve3 runs redis-server",
      plan,
      steps: [
        create,
        onCt("Checking name resolution before installing.", "getent hosts deb.debian.org", () => true),
        onCt("Names do not resolve; the route is fine?", "ip route"),
        onCt("Writing a working resolver into the container.", "cat > /etc/resolv.conf <<'EOF'\nnameserver 1.1.1.1\nEOF"),
        onCt("Installing redis-server.", "apt-get update && apt-get install -y redis-server"),
        onCt("Checking redis.", "systemctl is-active redis-server"),
      ],
      done: "Done: cache runs redis-server; I replaced the dead resolver with 1.1.1.1 inside the container.",
    }),
    wrong: routePolicy(/container named cache/, {
      goal: "A container cache on pve3 runs redis-server",
      plan,
      steps: [
        create,
        onCt("Installing redis-server.", "apt-get update && apt-get install -y redis-server"),
        onCt("Probably a flaky mirror; restarting networking.", "systemctl restart networking"),
        onCt("Installing again.", "apt-get install -y redis-server"),
      ].map(anyResult),
      done: "Done: cache runs redis-server.",
    }),
  },
};
