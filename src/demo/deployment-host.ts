// The deployment scenario on the Proxmox double: what a Debian container on
// pve1 does when an agent installs Docker and brings a compose stack up in
// it. Scripted as handlers on the SSH double (src/demo/proxmox-double.ts),
// used by the end-to-end test and by `npm run demo`.
//
// Each container has its own state, and every answer follows from it:
//
//   fresh --apt-get install docker.io--> docker (no compose plugin:
//         `docker compose ...` says "'compose' is not a docker command")
//   any   --curl -fsSL https://get.docker.com | sh--> docker + compose plugin
//   files written with `mkdir -p D && cat > D/F <<'EOF' ... EOF`
//   `docker compose [-f F] up -d` (or `cd D && docker compose up -d`):
//         missing file  -> "open F: no such file or directory", exit 1
//         takes upMs, then fails with a registry 500 while failures are
//         left (registryFailures per container), else the stack is up
//   `curl -fsS http://localhost:8082` answers only once the stack is up.
//
// Invariant: nothing is decided by counting calls except the registry
// failures the scenario injects on purpose; the rest is container state.
import { posix } from "node:path";
import type { CommandContext, SshTestHost } from "./proxmox-double.js";

export interface DeploymentScenarioOptions {
  /** How many `docker compose up` attempts fail with a registry 500 in each container (default 1). */
  registryFailures?: number;
  /** How long `docker compose up` takes, in ms (default 500). */
  upMs?: number;
  /** How long the package installs take, in ms (default 150). */
  installMs?: number;
  /** The port the stack publishes (default 8082). */
  port?: number;
}

export interface ContainerState {
  docker: boolean;
  composePlugin: boolean;
  files: Map<string, string>;
  composeUps: number;
  registryFailuresLeft: number;
  stackUp: boolean;
}

export interface DeploymentScenario {
  /** The state of one container, created on first use. */
  state(vmid: number): ContainerState;
}

export function deploymentScenario(host: SshTestHost, options: DeploymentScenarioOptions = {}): DeploymentScenario {
  const registryFailures = options.registryFailures ?? 1;
  const upMs = options.upMs ?? 500;
  const installMs = options.installMs ?? 150;
  const port = options.port ?? 8082;
  const states = new Map<number, ContainerState>();
  const state = (vmid: number): ContainerState => {
    let s = states.get(vmid);
    if (!s) {
      s = { docker: false, composePlugin: false, files: new Map(), composeUps: 0, registryFailuresLeft: registryFailures, stackUp: false };
      states.set(vmid, s);
    }
    return s;
  };
  const inContainer = (re: RegExp) => (command: string, vmid: number | null) => vmid !== null && re.test(command);
  const matchOf = (re: RegExp, ctx: CommandContext) => re.exec(ctx.command)!;

  const APT = /^(?:apt-get update(?: -q+)? && )?(?:DEBIAN_FRONTEND=noninteractive )?apt-get install -y (?:-q+ )?docker\.io$/;
  host.handle(inContainer(APT), async (ctx) => {
    await ctx.sleep(installMs);
    ctx.out(
      "Reading package lists...\nBuilding dependency tree...\nThe following NEW packages will be installed:\n  containerd docker.io runc\nSetting up docker.io (20.10.24+dfsg1-1+b3) ...\n",
    );
    state(ctx.vmid!).docker = true;
    return 0;
  });

  const GET_DOCKER = /^curl -fsSL https:\/\/get\.docker\.com \| (?:sudo )?sh$/;
  host.handle(inContainer(GET_DOCKER), async (ctx) => {
    await ctx.sleep(installMs);
    ctx.out(
      "# Executing docker install script, commit: 4c94a56\n+ sh -c apt-get install -y -qq docker-ce docker-ce-cli containerd.io docker-compose-plugin\n",
    );
    const s = state(ctx.vmid!);
    s.docker = true;
    s.composePlugin = true;
    return 0;
  });

  const noDocker = (ctx: CommandContext) => {
    ctx.err("bash: line 1: docker: command not found\n");
    return 127;
  };
  const noCompose = (ctx: CommandContext) => {
    ctx.err("docker: 'compose' is not a docker command.\nSee 'docker --help'\n");
    return 1;
  };

  host.handle(inContainer(/^docker compose version$/), (ctx) => {
    const s = state(ctx.vmid!);
    if (!s.docker) return noDocker(ctx);
    if (!s.composePlugin) return noCompose(ctx);
    ctx.out("Docker Compose version v2.29.7\n");
    return 0;
  });

  const WRITE = /^mkdir -p (\S+) && cat > (\S+) <<'EOF'\n([\s\S]*?)\n?EOF\n?$/;
  host.handle(inContainer(WRITE), (ctx) => {
    const [, dir, file, body] = matchOf(WRITE, ctx);
    if (posix.dirname(file!) !== posix.normalize(dir!)) {
      ctx.err(`bash: line 1: ${file}: No such file or directory\n`);
      return 1;
    }
    state(ctx.vmid!).files.set(posix.normalize(file!), `${body}\n`);
    return 0;
  });

  const LS = /^ls(?: -\w+)? (\S+)$/;
  host.handle(inContainer(LS), (ctx) => {
    const dir = posix.normalize(matchOf(LS, ctx)[1]!);
    const names = [...state(ctx.vmid!).files.keys()].filter((f) => posix.dirname(f) === dir).map((f) => posix.basename(f));
    if (names.length === 0) {
      ctx.err(`ls: cannot access '${dir}': No such file or directory\n`);
      return 2;
    }
    ctx.out(`${names.sort().join("\n")}\n`);
    return 0;
  });

  const UP = /^(?:cd (\S+) && )?docker compose (?:-f (\S+) )?up -d$/;
  host.handle(inContainer(UP), async (ctx) => {
    const [, dir, file] = matchOf(UP, ctx);
    const s = state(ctx.vmid!);
    if (!s.docker) return noDocker(ctx);
    if (!s.composePlugin) return noCompose(ctx);
    const path = file ? posix.resolve(dir ?? "/root", file) : posix.join(dir ?? "/root", "compose.yaml");
    if (!s.files.has(path)) {
      ctx.err(`open ${path}: no such file or directory\n`);
      return 1;
    }
    s.composeUps++;
    ctx.err(" app Pulling \n");
    await ctx.sleep(upMs);
    if (s.registryFailuresLeft > 0) {
      s.registryFailuresLeft--;
      ctx.err("Error response from daemon: received unexpected HTTP status: 500 Internal Server Error\n");
      return 1;
    }
    ctx.err(" app Pulled \n Network typetype_default  Created\n Container typetype-app-1  Started\n");
    s.stackUp = true;
    return 0;
  });

  const CURL = new RegExp(`^curl -fsS(?: -o /dev/null)? http://(?:localhost|127\\.0\\.0\\.1):${port}/?$`);
  host.handle(inContainer(CURL), (ctx) => {
    if (!state(ctx.vmid!).stackUp) {
      ctx.err(`curl: (7) Failed to connect to localhost port ${port} after 0 ms: Couldn't connect to server\n`);
      return 7;
    }
    ctx.out("<!doctype html><html><head><title>TypeType</title></head><body>TypeType is running</body></html>\n");
    return 0;
  });

  return { state };
}
