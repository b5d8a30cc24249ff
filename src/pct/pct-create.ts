// pct_create: create a container on a Proxmox node, start it, register it
// as a target, and nothing else (installs and configuration are separate
// `run` steps the agent observes). Invariants:
// - Input is validated before anything touches a host; every value that
//   reaches the command line matches a narrow shape and is quoted anyway.
// - Without a vmid, the next free one comes from `pvesh get /cluster/nextid`;
//   if a concurrent create takes it first, the next one is tried.
// - The container is registered only once `pct status` says it is running,
//   in a withActor transaction naming the session's actor.
// - ctx.signal (the turn's: the operator's Stop) kills the remote command in
//   flight and stops before the next one; what was created is left as it
//   is, unregistered, and the error says so.
import type { Kysely } from "kysely";
import { z } from "zod";
import type { Database } from "../db/schema.js";
import { withActor } from "../db/with-actor.js";
import type { Logger } from "../log/logger.js";
import type { SshPool } from "../ssh/connection-pool.js";
import { shellQuote } from "../ssh/quote.js";
import type { Redactor } from "../ssh/redact.js";
import { type CommandResult, runCommand } from "../ssh/run-command.js";
import { type TargetRegistry, targetRegisterContainer } from "../targets/registry.js";
import { TARGET_NAME } from "../targets/targets-file.js";

const RFC1123_HOSTNAME = /^(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4_CIDR = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\/([0-9]|[12]\d|3[0-2])$/;

export const pctCreateInput = z.strictObject({
  node: z.string().regex(TARGET_NAME, "must name a Proxmox node target"),
  hostname: z
    .string()
    .regex(RFC1123_HOSTNAME, "must be an RFC 1123 host name of at most 63 characters (letters, digits, '-', dots between labels)"),
  ostemplate: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_.-]*:vztmpl\/[A-Za-z0-9_.+-]+\.tar\.(gz|xz|zst)$/,
      "must look like local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
    ),
  vmid: z.number().int().min(100, "must be at least 100").max(999_999_999, "must be at most 999999999").optional(),
  cores: z.number().int().min(1).max(512).default(1),
  memory_mb: z.number().int().min(16).max(4_194_304).default(512),
  disk_gb: z.number().int().min(1).max(131_072).default(8),
  storage: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,62}$/, "must be a Proxmox storage id such as local-lvm")
    .default("local-lvm"),
  bridge: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,14}$/, "must be a bridge name such as vmbr0")
    .default("vmbr0"),
  ip: z
    .string()
    .refine((v) => v === "dhcp" || IPV4_CIDR.test(v), "must be dhcp or an IPv4 address with prefix length, like 192.168.1.50/24")
    .default("dhcp"),
  nesting: z.boolean().default(false),
  keyctl: z.boolean().default(false),
  unprivileged: z.boolean().default(true),
});

export type PctCreateInput = z.input<typeof pctCreateInput>;

export interface PctCreateDeps {
  db: Kysely<Database>;
  registry: TargetRegistry;
  pool: SshPool;
  redact: Redactor;
  log: Logger;
  /** How long to wait for `pct status` to say running. */
  startWaitMs?: number;
}

export class PctCreateError extends Error {
  override name = "PctCreateError";
}

const MAX_VMID_ATTEMPTS = 5;

export async function pctCreate(
  deps: PctCreateDeps,
  input: unknown,
  ctx: { sessionId: string; actor: string; signal?: AbortSignal | undefined },
): Promise<{ target: string; node: string; vmid: number; hostname: string }> {
  const parsed = pctCreateInput.safeParse(input);
  if (!parsed.success) {
    throw new PctCreateError(`pct_create: ${parsed.error.issues.map((i) => `${i.path.join(".") || "input"} ${i.message}`).join("; ")}`);
  }
  const p = parsed.data;
  const node = await deps.registry.resolve(p.node);
  if (node?.kind !== "proxmox") {
    throw new PctCreateError(
      `pct_create: node "${p.node}" is not a Proxmox node in the targets file${node ? ` (it is a ${node.kind} target)` : ""}`,
    );
  }
  if (await deps.registry.resolve(p.hostname)) {
    throw new PctCreateError(`pct_create: a target named "${p.hostname}" already exists; choose another hostname`);
  }
  const log = deps.log.child({ sessionId: ctx.sessionId, node: p.node, hostname: p.hostname });
  let vmid = p.vmid;
  const run = async (command: string, timeoutS: number): Promise<CommandResult> => {
    const stopped = () =>
      new PctCreateError(
        `pct_create: stopped by the operator during \`${command}\` on ${p.node}; the container${vmid !== undefined ? ` (vmid ${vmid})` : ""} is left as it is and was not registered`,
      );
    if (ctx.signal?.aborted) throw stopped();
    const r = await runCommand(deps.pool, node.ssh, {
      command,
      timeoutS,
      outputCapBytes: 16 * 1024,
      redact: deps.redact,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (r.cancelled || ctx.signal?.aborted) throw stopped();
    return r;
  };
  const failed = (what: string, r: CommandResult) =>
    new PctCreateError(
      `pct_create: ${what} failed on ${p.node} (${r.timedOut ? "timed out" : `exit ${r.exitCode}`}): ${(r.stderr || r.stdout).trim().slice(0, 2000)}`,
    );

  for (let attempt = 1; ; attempt++) {
    if (p.vmid === undefined) {
      const next = await run("pvesh get /cluster/nextid", 30);
      const id = Number(/^\s*"?(\d+)"?\s*$/.exec(next.stdout)?.[1]);
      if (next.exitCode !== 0 || !Number.isInteger(id)) throw failed("pvesh get /cluster/nextid", next);
      vmid = id;
    }
    const created = await run(createCommand(vmid!, p), 300);
    if (created.exitCode === 0) break;
    const taken = /already exists/i.test(created.stderr);
    if (taken && p.vmid === undefined && attempt < MAX_VMID_ATTEMPTS) {
      log.info({ vmid }, "vmid taken by a concurrent create; trying the next one");
      continue;
    }
    throw failed(`pct create ${vmid}`, created);
  }
  const id = vmid!;
  const started = await run(`pct start ${id}`, 120);
  if (started.exitCode !== 0) throw failed(`pct start ${id}`, started);
  const deadline = Date.now() + (deps.startWaitMs ?? 30_000);
  for (;;) {
    const status = await run(`pct status ${id}`, 15);
    if (status.exitCode === 0 && /status:\s*running/.test(status.stdout)) break;
    if (Date.now() > deadline) throw failed(`waiting for container ${id} to run (last: ${status.stdout.trim() || "no status"})`, status);
    await new Promise((r) => setTimeout(r, 500));
  }
  await withActor(deps.db, ctx.actor, (tx) =>
    targetRegisterContainer(tx, { name: p.hostname, node: p.node, vmid: id, createdBySessionId: ctx.sessionId }),
  );
  log.info({ vmid: id }, "container created, started and registered");
  return { target: p.hostname, node: p.node, vmid: id, hostname: p.hostname };
}

function createCommand(vmid: number, p: z.output<typeof pctCreateInput>): string {
  const features = [p.nesting ? "nesting=1" : "", p.keyctl ? "keyctl=1" : ""].filter(Boolean).join(",");
  const args = [
    "pct",
    "create",
    String(vmid),
    p.ostemplate,
    "--hostname",
    p.hostname,
    "--cores",
    String(p.cores),
    "--memory",
    String(p.memory_mb),
    "--rootfs",
    `${p.storage}:${p.disk_gb}`,
    "--net0",
    `name=eth0,bridge=${p.bridge},ip=${p.ip}`,
    "--unprivileged",
    p.unprivileged ? "1" : "0",
    ...(features ? ["--features", features] : []),
  ];
  return args.map((a) => (/^[A-Za-z0-9_./:=,-]+$/.test(a) ? a : shellQuote(a))).join(" ");
}
