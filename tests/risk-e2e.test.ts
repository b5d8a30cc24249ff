// End to end through the agent (issue 12): with no window open, a model that
// asks to `run` a command of the kinds the classifier once called read-only
// (or merely config_mutation) gets a pending approval, the host receives
// nothing, and the reason is stored and readable where the operator reads it
// (the approval JSON and GET /api/executions/:id).
import { describe, expect, it } from "vitest";
import { approvalViews } from "../src/approvals/approval-view.js";
import { executionToJson } from "../src/executions/execution-json.js";
import { executionGet } from "../src/executions/lifecycle.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
/** Every command the host double was asked to run. */
const received: string[] = [];
const h = useAgentHarness(t, {
  respond: (_target, command) => {
    received.push(command);
    return { exitCode: 0, stdout: `did: ${command}\n` };
  },
});

const KINDS: [string, "config_mutation" | "destructive", RegExp][] = [
  ["env -S 'pct destroy 105'", "destructive", /pct destroy/],
  ["sed -n '1e reboot' /etc/hostname", "destructive", /sed script runs a command/],
  ["sort -o /etc/passwd /dev/null", "destructive", /writes \/etc\/passwd/],
  ["ssh -o ProxyCommand=reboot x true", "destructive", /runs a command given in ProxyCommand/],
  ["git -c core.fsmonitor=reboot status", "destructive", /core\.fsmonitor/],
  ["echo b > /proc/sysrq-trigger", "destructive", /sysrq-trigger/],
  ["docker run -v /:/host alpine rm -rf /host", "destructive", /host's \/ mounted/],
  ["cat /etc/shadow", "config_mutation", /secret store/],
];

describe("the agent's run tool, no window open", () => {
  it("turns each kind into a pending approval with its reason, and the host receives nothing", async () => {
    await makeNodeTarget(t.db.kysely, "pve1");
    const s = await makeSession(t.db.kysely);
    for (const [command, risk, reason] of KINDS) {
      h.double.setPolicy(
        scriptedPolicy([
          { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command } }] },
          { content: [{ type: "text", text: "Waiting for the operator." }] },
        ]),
      );
      await h.turns.chat(s.id, `please run: ${command}`, "operator:alice", { mayConfirmDestructive: true });
      await h.turns.idle(s.id);
      const execution = await t.db.kysely
        .selectFrom("executions")
        .selectAll()
        .where("session_id", "=", s.id)
        .where("command", "=", command)
        .executeTakeFirstOrThrow();
      expect(execution, command).toMatchObject({ status: "pending_approval", risk });
      const row = await executionGet(t.db.kysely, { executionId: execution.id });
      const json = row && executionToJson(row);
      expect(json?.riskReason, command).toMatch(reason);
      const [approval] = (await approvalViews(t.db.kysely, { sessionId: s.id, status: "pending" })).filter(
        (a) => a.executionId === execution.id,
      );
      expect(approval, command).toMatchObject({ kind: "execution", risk, riskReason: json?.riskReason });
      if (risk === "destructive") expect(approval?.confirmationPhrase, command).toBeTruthy();
    }
    expect(received).toEqual([]);
  });

  it("still runs ordinary diagnostics at once, storing why they are read-only", async () => {
    const s = await makeSession(t.db.kysely);
    h.double.setPolicy(
      scriptedPolicy([
        { content: [{ type: "tool_use", name: "run", input: { target: "pve1", command: "systemctl status nginx" } }] },
        { content: [{ type: "text", text: "Looked." }] },
      ]),
    );
    await h.turns.chat(s.id, "look at nginx", "operator:alice", { mayConfirmDestructive: true });
    await h.turns.idle(s.id);
    expect(received).toEqual(["systemctl status nginx"]);
    const execution = await t.db.kysely.selectFrom("executions").selectAll().where("session_id", "=", s.id).executeTakeFirstOrThrow();
    expect(execution).toMatchObject({ status: "completed", risk: "read_only" });
    expect(execution.risk_reason).toMatch(/read-only shape `systemctl`/);
  });
});
