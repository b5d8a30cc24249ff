// The get_execution_status tool: the status and result of one execution of
// this session, as executions/execution-note.ts writes it. Invariant: reads
// only, and only the session's own executions; a pending one says not to
// poll (its result comes back as a continuation).
import { z } from "zod";
import { executionNote } from "../../executions/execution-note.js";
import { toolDefine, toolFail } from "./tool.js";

export const getExecutionStatus = toolDefine({
  name: "get_execution_status",
  description: "The status and captured result of one execution of this session.",
  inputSchema: z.object({ execution_id: z.uuid("must be an execution id (a UUID)") }).strict(),
  async run(deps, ctx, input) {
    const e = await deps.db
      .selectFrom("executions")
      .selectAll()
      .where("id", "=", input.execution_id)
      .where("session_id", "=", ctx.sessionId)
      .executeTakeFirst();
    if (!e) return toolFail(`execution ${input.execution_id} does not exist in this session`);
    const pending = e.status === "approved" || e.status === "running" || e.status === "pending_approval";
    const note = pending ? "\n(Do not poll: its result is delivered to you as a system note when it finishes.)" : "";
    return { content: executionNote(e) + note, isError: false, readOnly: true, executionId: e.id };
  },
});
