// The list_targets tool: the hosts the agent may act on and their kinds.
// Invariant: reads only (the registry), changes nothing.
import { z } from "zod";
import { toolDefine } from "./tool.js";

export const listTargets = toolDefine({
  name: "list_targets",
  description: "List the hosts you may act on (Proxmox nodes, SSH hosts, containers) and their kinds.",
  inputSchema: z.object({}).strict(),
  async run(deps) {
    const targets = await deps.executions.listTargets();
    if (targets.length === 0) return { content: "No targets are configured (NOMOS_TARGETS_FILE).", isError: false, readOnly: true };
    const lines = targets.map((t) => (t.kind === "container" ? `${t.name} (container ${t.node}/${t.vmid})` : `${t.name} (${t.kind})`));
    return { content: lines.join("\n"), isError: false, readOnly: true };
  },
});
