// A Proxmox node of the evaluation, on the SSH double (src/demo/
// proxmox-double.ts): it composes the double with a ContainerState per
// container, so commands inside a container (`pct exec N -- ...`) are
// answered by the container shell, and adds the node-side commands that
// repair a container from outside (`pct set N --nameserver/--net0`,
// `pct config N`). Scenarios add their own handlers after install, which
// put them in front (the double tries the newest handler first).
//
// Invariant: one ContainerState per vmid, created when the container first
// appears (pre-seeded by the scenario, or made by `pct create` and then
// shaped by the scenario's onCreate), and it lives as long as the node.
import { type Container, SshTestHost as Host, type SshTestHost } from "../../demo/proxmox-double.js";
import { containerShell } from "./container-shell.js";
import { type ContainerState, newContainer } from "./container-state.js";

export interface SimulatedNode {
  host: SshTestHost;
  /** The LAN router every container's default route should point at. */
  lanGateway: string;
  /** The state of a container (created from the double's record on first use). */
  container(vmid: number): ContainerState;
  /** A container that exists before the scenario starts (running). */
  addContainer(vmid: number, hostname: string, shape?: (ct: ContainerState) => void): ContainerState;
  /** Containers the double knows, by hostname. */
  byHostname(hostname: string): { record: Container; state: ContainerState } | undefined;
  stop(): Promise<void>;
}

export interface SimulatedNodeOptions {
  nodeName: string;
  lanGateway?: string;
  /** Shapes a container the agent creates, when it first appears (a fault in new containers). */
  onCreate?: (ct: ContainerState) => void;
  /** Leave the container shell out (a scenario with its own handlers, like the deployment). */
  shell?: boolean;
}

export async function startSimulatedNode(options: SimulatedNodeOptions): Promise<SimulatedNode> {
  const host = await Host.start({ nodeName: options.nodeName });
  const lanGateway = options.lanGateway ?? "192.168.1.1";
  const states = new Map<number, ContainerState>();
  const container = (vmid: number): ContainerState => {
    let ct = states.get(vmid);
    if (!ct) {
      ct = newContainer(vmid, host.containers.get(vmid)?.hostname ?? `CT${vmid}`, lanGateway);
      options.onCreate?.(ct);
      states.set(vmid, ct);
    }
    return ct;
  };

  if (options.shell !== false) {
    host.handle(
      (_command, vmid) => vmid !== null,
      (ctx) => {
        const record = host.containers.get(ctx.vmid!);
        if (record?.status !== "running") {
          ctx.err(`CT ${ctx.vmid} not running\n`);
          return 255;
        }
        return containerShell(container(ctx.vmid!), ctx.command, { out: (t) => ctx.out(t), err: (t) => ctx.err(t) });
      },
    );
  }
  const PCT_SET = /^pct set (\d+) (.+)$/;
  host.handle(
    (command, vmid) => vmid === null && PCT_SET.test(command),
    (ctx) => {
      const [, id, rest] = PCT_SET.exec(ctx.command)!;
      const vmid = Number(id);
      if (!host.containers.has(vmid)) {
        ctx.err(`Configuration file 'nodes/${host.node}/lxc/${vmid}.conf' does not exist\n`);
        return 255;
      }
      const ct = container(vmid);
      const ns = /--nameserver[= ]"?([\d. ]+)"?/.exec(rest!);
      if (ns)
        ct.files.set(
          "/etc/resolv.conf",
          ns[1]!
            .trim()
            .split(/\s+/)
            .map((s) => `nameserver ${s}\n`)
            .join(""),
        );
      const net = /--net0[= ](\S+)/.exec(rest!);
      if (net) {
        const gw = /(?:^|,)gw=([\d.]+)/.exec(net[1]!);
        ct.gateway = gw ? gw[1]! : null;
        const ip = /(?:^|,)ip=([\d./]+)/.exec(net[1]!);
        if (ip && ip[1] !== "dhcp") ct.address = ip[1]!;
      }
      if (!ns && !net) {
        host.containers.get(vmid)!.options[rest!.split(/\s+/)[0]!.replace(/^--/, "")] = rest!.split(/\s+/)[1] ?? "";
      }
      return 0;
    },
  );
  const PCT_CONFIG = /^pct config (\d+)$/;
  host.handle(
    (command, vmid) => vmid === null && PCT_CONFIG.test(command),
    (ctx) => {
      const vmid = Number(PCT_CONFIG.exec(ctx.command)![1]);
      const record = host.containers.get(vmid);
      if (!record) {
        ctx.err(`Configuration file 'nodes/${host.node}/lxc/${vmid}.conf' does not exist\n`);
        return 255;
      }
      const ct = container(vmid);
      const ns = [...(ct.files.get("/etc/resolv.conf") ?? "").matchAll(/nameserver\s+(\S+)/g)].map((m) => m[1]).join(" ");
      ctx.out(
        `arch: amd64\ncores: 2\nhostname: ${record.hostname}\nmemory: 2048\nnameserver: ${ns}\nnet0: name=eth0,bridge=vmbr0,ip=${ct.address}${ct.gateway ? `,gw=${ct.gateway}` : ""},type=veth\nrootfs: local-lvm:vm-${vmid}-disk-0,size=${Math.round(ct.diskMb / 1024)}G\n`,
      );
      return 0;
    },
  );
  host.handle(
    (command, vmid) => vmid === null && /^ip r(oute)?( show)?$/.test(command),
    (ctx) => {
      ctx.out(
        `default via ${lanGateway} dev vmbr0 proto kernel onlink\n${lanGateway.replace(/\.\d+$/, ".0")}/24 dev vmbr0 proto kernel scope link\n`,
      );
      return 0;
    },
  );

  return {
    host,
    lanGateway,
    container,
    addContainer(vmid, hostname, shape) {
      host.containers.set(vmid, {
        vmid,
        hostname,
        status: "running",
        ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
        options: {},
      });
      const ct = newContainer(vmid, hostname, lanGateway);
      shape?.(ct);
      states.set(vmid, ct);
      return ct;
    },
    byHostname(hostname) {
      const record = [...host.containers.values()].find((c) => c.hostname === hostname);
      return record ? { record, state: container(record.vmid) } : undefined;
    },
    stop: () => host.stop(),
  };
}
