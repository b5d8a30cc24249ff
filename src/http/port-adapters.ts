// Adapts the agent (Turns, approvalDecide, the assent window) and the
// executions lifecycle to the narrow ports the /api routes call
// (api-deps.ts), translating their typed errors into PortError so the routes
// answer 404 / 409 / 400 with the domain's own message. main.ts builds these
// once; nothing here holds state.
import { type ApprovalDeps, approvalDecide } from "../approvals/decide.js";
import { ApprovalAlreadyDecidedError, ApprovalConfirmationError, ApprovalNotFoundError, ApprovalRoleError } from "../approvals/errors.js";
import { assentWindowRevoke } from "../assent/window.js";
import type { Db } from "../db/connect.js";
import { withActor } from "../db/with-actor.js";
import { ExecutionTransitionError, executionCancel } from "../executions/lifecycle.js";
import { TurnInputError, TurnSessionNotFoundError, type Turns } from "../turns/turns.js";
import { type AgentPort, type ChatOptions, type ExecutionsPort, PortError } from "./api-deps.js";

function toPortError(err: unknown): unknown {
  if (err instanceof ApprovalNotFoundError || err instanceof TurnSessionNotFoundError) {
    return new PortError("not_found", err.message, undefined, { cause: err });
  }
  if (err instanceof ApprovalAlreadyDecidedError) return new PortError("conflict", err.message, undefined, { cause: err });
  if (err instanceof ApprovalRoleError) return new PortError("forbidden", err.message, undefined, { cause: err });
  if (err instanceof ApprovalConfirmationError) return new PortError("bad_request", err.message, "confirmation", { cause: err });
  if (err instanceof TurnInputError) return new PortError("bad_request", err.message, "text", { cause: err });
  if (err instanceof ExecutionTransitionError) {
    return err.found === "missing"
      ? new PortError("not_found", `execution ${err.executionId} does not exist`, undefined, { cause: err })
      : new PortError("conflict", err.message, undefined, { cause: err });
  }
  return err;
}

const mapped =
  <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
  (...args: A): Promise<R> =>
    fn(...args).catch((err: unknown) => {
      throw toPortError(err);
    });

export function agentPortFrom(p: { db: Db; turns: Turns; approvalDeps: ApprovalDeps }): AgentPort {
  return {
    chat: mapped((sessionId: string, text: string, actor: string, options: ChatOptions) => p.turns.chat(sessionId, text, actor, options)),
    abort: mapped((sessionId: string) => p.turns.abort(sessionId)),
    decideApproval: mapped((params) => approvalDecide(p.approvalDeps, params)),
    revokeAssent: mapped(async (sessionId: string, actor: string) => {
      await withActor(p.db.kysely, actor, (tx) => assentWindowRevoke(tx, { sessionId, actor }));
    }),
    stop: mapped((sessionId: string, actor: string) => p.turns.stopSession(sessionId, actor)),
  };
}

export function executionsPortFromLifecycle(p: { db: Db }): ExecutionsPort {
  return {
    cancel: mapped(({ executionId, actor, reason }: { executionId: string; actor: string; reason?: string }) =>
      withActor(p.db.kysely, actor, (tx) =>
        executionCancel(tx, { executionId, reason: reason ?? `cancelled by ${actor.replace(/^operator:/, "")}` }),
      ),
    ),
  };
}
