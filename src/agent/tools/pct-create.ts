// The pct_create tool: create and start an LXC container and register it as
// a target; nothing else. Invariants: it runs only when the assent gate
// allows a config change on that node; the new container joins the open
// window's scope (the one window change a tool makes besides report_outcome).
import { z } from "zod";
import { gateDecide } from "../../assent/gate.js";
import { assentWindowAddScope, assentWindowCurrent } from "../../assent/window.js";
import { withActor } from "../../db/with-actor.js";
import { targetName, toolDefine, toolFail } from "./tool.js";

export const pctCreate = toolDefine({
  name: "pct_create",
  description:
    "Create and start an LXC container on a Proxmox node and register it as a target named after its hostname. " +
    "Nothing else: install, configure and verify with separate run steps.",
  inputSchema: z
    .object({
      node: targetName.describe("The Proxmox node to create the container on"),
      hostname: z
        .string()
        .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "must be a DNS label: lowercase letters, digits and -")
        .describe("Container hostname; it becomes the target name"),
      ostemplate: z.string().min(1).describe("e.g. local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"),
      vmid: z.number().int().min(100).max(999_999_999).optional(),
      cores: z.number().int().min(1).max(128).optional(),
      memory_mb: z.number().int().min(64).max(1_048_576).optional(),
      disk_gb: z.number().int().min(1).max(65_536).optional(),
      storage: z.string().min(1).optional(),
      bridge: z.string().min(1).optional(),
      ip: z.string().min(1).optional().describe('"dhcp" or CIDR like 192.168.1.50/24'),
      nesting: z.boolean().optional(),
      keyctl: z.boolean().optional(),
      unprivileged: z.boolean().optional(),
    })
    .strict(),
  async run(deps, ctx, input) {
    const node = await deps.executions.resolveTarget(input.node);
    if (node?.kind !== "proxmox") return toolFail(`node: "${input.node}" is not a Proxmox node target`);
    const window = await assentWindowCurrent(deps.db, { sessionId: ctx.sessionId });
    const gate = gateDecide({
      window,
      sessionId: ctx.sessionId,
      target: node,
      risk: "config_mutation",
      command: `pct create ${input.hostname}`,
    });
    if (gate.action === "ask") {
      return toolFail(
        `pct_create not run: ${gate.why}. Propose a plan whose steps name ${node.name} and wait for the operator's approval.`,
        false,
      );
    }
    const created = await deps.executions.pctCreate(input, {
      sessionId: ctx.sessionId,
      actor: `agent:${ctx.sessionId}`,
      signal: ctx.signal,
    });
    await withActor(deps.db, `agent:${ctx.sessionId}`, (tx) =>
      assentWindowAddScope(tx, { sessionId: ctx.sessionId, targets: [created.target, `${created.node}/${created.vmid}`] }),
    );
    return {
      content: `container ${created.hostname} created and started on ${created.node} as vmid ${created.vmid}; it is target "${created.target}" and inside this assent window.`,
      isError: false,
      readOnly: false,
    };
  },
});
