// The state of one simulated Debian container for the evaluation scenarios:
// files, packages, services, network, the dpkg lock, disk usage, docker
// volumes and compose stacks. Pure data plus the rules every answer of the
// shell (container-shell.ts) follows from.
//
// Invariant: every observable fact is derived from this state (what is
// listening comes from the active services, whether DNS resolves from
// /etc/resolv.conf and the default route, free space from the sizes of the
// files); nothing counts calls. A scenario sets a fault by setting state,
// and a fix works only if it changes the state the fault lives in.

export interface ServiceSpec {
  /** The TCP port it listens on when active. */
  port?: number;
  /** What `curl localhost:<port>` answers while it runs. */
  body?: string;
  /** Why it dies on start, read from the container's state; null when it would run. */
  failure?: (ct: ContainerState) => string | null;
  /** systemd reports the start as done and the process dies after (Type=simple). */
  diesAfterStart?: boolean;
}

export interface Service extends ServiceSpec {
  name: string;
  active: boolean;
  enabled: boolean;
  journal: string[];
  pid: number;
}

export interface Process {
  pid: number;
  user: string;
  command: string;
  /** The dpkg lock it holds, if any. */
  holdsDpkgLock?: boolean;
  /** The unit it belongs to (stopping the unit ends it). */
  unit?: string;
}

export interface ComposeStack {
  dir: string;
  up: boolean;
  /** The named volumes the stack uses. */
  volumes: string[];
  /** Why `up` fails given the container's state, or null. */
  failure?: (ct: ContainerState) => string | null;
}

export interface ContainerState {
  vmid: number;
  hostname: string;
  files: Map<string, string>;
  /** Sizes of large files, in MB (files not listed are tiny). */
  sizesMb: Map<string, number>;
  diskMb: number;
  /** Space used by everything not in sizesMb. */
  baseUsedMb: number;
  journalMb: number;
  packages: Set<string>;
  services: Map<string, Service>;
  processes: Map<number, Process>;
  address: string;
  gateway: string | null;
  /** The gateway that routes (the LAN's router). */
  lanGateway: string;
  /** dpkg was killed mid-run: apt refuses until `dpkg --configure -a`. */
  dpkgInterrupted: boolean;
  /** The lock file was removed while its holder ran: the dpkg database is damaged. */
  dpkgDamaged: boolean;
  docker: boolean;
  volumes: Set<string>;
  stacks: Map<string, ComposeStack>;
  nextPid: number;
}

/** Packages the simulated mirror serves, and the service each brings. */
export const PACKAGES: Record<string, { service?: string; spec?: ServiceSpec; sizeMb: number }> = {
  nginx: { service: "nginx", spec: { port: 80, body: "<title>Welcome to nginx!</title>" }, sizeMb: 3 },
  "redis-server": { service: "redis-server", spec: { port: 6379, body: "" }, sizeMb: 6 },
  htop: { sizeMb: 1 },
  curl: { sizeMb: 1 },
  jq: { sizeMb: 1 },
  git: { sizeMb: 40 },
};

/** Nameservers that answer (public resolvers; a LAN router is added per container). */
const PUBLIC_RESOLVERS = new Set(["1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4", "9.9.9.9"]);

export function newContainer(vmid: number, hostname: string, lanGateway = "192.168.1.1"): ContainerState {
  const prefix = lanGateway.split(".").slice(0, 3).join(".");
  const ct: ContainerState = {
    vmid,
    hostname,
    files: new Map([
      ["/etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'],
      ["/etc/hostname", `${hostname}\n`],
      ["/etc/resolv.conf", `nameserver ${lanGateway}\n`],
      ["/etc/hosts", `127.0.0.1 localhost\n${prefix}.${vmid % 200} ${hostname}\n`],
    ]),
    sizesMb: new Map(),
    diskMb: 8192,
    baseUsedMb: 900,
    journalMb: 40,
    packages: new Set(["bash", "coreutils", "apt", "systemd", "iproute2", "iputils-ping"]),
    services: new Map(),
    processes: new Map([[1, { pid: 1, user: "root", command: "/sbin/init" }]]),
    address: `${prefix}.${50 + (vmid % 100)}/24`,
    gateway: lanGateway,
    lanGateway,
    dpkgInterrupted: false,
    dpkgDamaged: false,
    docker: false,
    volumes: new Set(),
    stacks: new Map(),
    nextPid: 300,
  };
  return ct;
}

export function addService(
  ct: ContainerState,
  name: string,
  spec: ServiceSpec,
  state: { active?: boolean; enabled?: boolean } = {},
): Service {
  const svc: Service = { name, ...spec, active: false, enabled: state.enabled ?? true, journal: [], pid: 0 };
  ct.services.set(name, svc);
  if (state.active) {
    svc.active = true;
    svc.pid = spawn(ct, spec.port ? `/usr/sbin/${name}` : `/usr/bin/${name}`, name);
  }
  return svc;
}

export function spawn(ct: ContainerState, command: string, unit?: string, user = "root"): number {
  const pid = ct.nextPid++;
  ct.processes.set(pid, { pid, user, command, ...(unit ? { unit } : {}) });
  return pid;
}

export function usedMb(ct: ContainerState): number {
  let sum = ct.baseUsedMb + ct.journalMb;
  for (const mb of ct.sizesMb.values()) sum += mb;
  return sum;
}

export const freeMb = (ct: ContainerState) => Math.max(0, ct.diskMb - usedMb(ct));

/** Internet reachable: the default route goes through the LAN's router. */
export const online = (ct: ContainerState) => ct.gateway === ct.lanGateway;

/** Names resolve: online and /etc/resolv.conf names a resolver that answers. */
export function dnsWorks(ct: ContainerState): boolean {
  if (!online(ct)) return false;
  const servers = [...(ct.files.get("/etc/resolv.conf") ?? "").matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1]!);
  return servers.some((s) => PUBLIC_RESOLVERS.has(s) || s === ct.lanGateway);
}

/** The service (if any) listening on a port. */
export const listener = (ct: ContainerState, port: number) => [...ct.services.values()].find((s) => s.active && s.port === port);

/** Starts a service; returns the error line when it dies instead. */
export function serviceStart(ct: ContainerState, svc: Service): string | null {
  if (svc.active) return null;
  const busy = svc.port === undefined ? undefined : listener(ct, svc.port);
  const why =
    (busy ? `bind() to 0.0.0.0:${svc.port} failed (98: Address already in use)` : null) ??
    (freeMb(ct) < 1 ? "No space left on device" : null) ??
    svc.failure?.(ct) ??
    null;
  if (why) {
    svc.journal.push(
      `${svc.name}[${ct.nextPid++}]: ${why}`,
      `systemd[1]: ${svc.name}.service: Main process exited, code=exited, status=1/FAILURE`,
    );
    svc.journal.push(`systemd[1]: ${svc.name}.service: Failed with result 'exit-code'.`);
    return why;
  }
  svc.active = true;
  svc.pid = spawn(ct, `/usr/sbin/${svc.name}`, svc.name);
  svc.journal.push(`systemd[1]: Started ${svc.name}.service.`);
  return null;
}

export function serviceStop(ct: ContainerState, svc: Service): void {
  if (!svc.active) return;
  svc.active = false;
  ct.processes.delete(svc.pid);
  for (const p of [...ct.processes.values()]) if (p.unit === svc.name) ct.processes.delete(p.pid);
  svc.journal.push(`systemd[1]: Stopped ${svc.name}.service.`);
}
