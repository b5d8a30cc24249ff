// Decisions the operator's words make in chat, read against the session's
// pending approvals: forward assent approves every pending approval that
// needs no typed phrase; a message that IS a card's confirmation approves
// that card (assent/confirmation.ts); "reject" rejects every pending
// approval. Invariant: every decision goes through approvalDecide (the one
// place approvals are decided), so words and buttons obey the same rules; a
// phrase typed below admin, or only mentioned, decides nothing and the
// agent is told so.
import { confirmationRead, rejectionRead } from "../assent/confirmation.js";
import type { AssentReading } from "../assent/vocabulary.js";
import type { Logger } from "../log/logger.js";
import { approvalViews } from "./approval-view.js";
import { type ApprovalDeps, approvalDecide } from "./decide.js";

/**
 * Decisions the operator's words make: forward assent approves every
 * pending approval that needs no typed phrase; a message that IS a card's
 * confirmation approves that card (confirmation.ts); "reject" rejects
 * every pending approval. A message that mentions a phrase without
 * confirming it decides nothing, and the agent is told so. Returns notes
 * for the agent and how many approvals were pending.
 */
export async function approvalsDecideByWords(
  deps: {
    approvals: Omit<ApprovalDeps, "onApprovalsSettled">;
    /** Where a decision that could not be applied is logged. */
    log: Logger;
  },
  p: {
    sessionId: string;
    text: string;
    reading: AssentReading;
    actor: string;
    /** Only an admin's words confirm a destructive step (issue 14: roles). */
    mayConfirmDestructive: boolean;
  },
): Promise<{ notes: string[]; pending: number }> {
  const { sessionId, text, reading, actor, mayConfirmDestructive } = p;
  const pending = await approvalViews(deps.approvals.db, { sessionId, status: "pending" });
  const rejecting = reading !== "assent" && rejectionRead(text);
  const notes: string[] = [];
  for (const a of pending) {
    const read = a.confirmationPhrase !== null ? confirmationRead(text, a.confirmationPhrase) : "absent";
    // A phrase typed by someone below admin confirms nothing (issue 14).
    const typed = read === "confirms" && !mayConfirmDestructive ? "not_admin" : read;
    const what = a.kind === "plan" ? `plan ${a.planId} ("${a.goal}")` : `execution ${a.executionId} (${a.command} on ${a.target})`;
    const decision = rejecting
      ? "reject"
      : typed === "confirms" || (reading === "assent" && a.confirmationPhrase === null)
        ? "approve"
        : undefined;
    if (!decision) {
      if (typed === "mentions") {
        notes.push(
          `Note: the operator mentioned '${a.confirmationPhrase}' but did not confirm it; approval ${a.id} for ${what} stays pending and nothing ran.`,
        );
      } else if (typed === "not_admin") {
        notes.push(
          `Approval ${a.id} (${a.command} on ${a.target}) is destructive: the operator typed its phrase, but only an admin can confirm it; it stays pending until an admin types "${a.confirmationPhrase}".`,
        );
      } else if (reading === "assent" && a.confirmationPhrase !== null) {
        notes.push(
          `Approval ${a.id} (${a.command} on ${a.target}) is destructive and stays pending until an admin types "${a.confirmationPhrase}".`,
        );
      }
      continue;
    }
    try {
      // No onApprovalsSettled here: this chat turn itself carries the decision to the agent.
      await approvalDecide(
        { ...deps.approvals, onApprovalsSettled: undefined },
        {
          approvalId: a.id,
          decision,
          ...(decision === "approve" && typed === "confirms" ? { confirmation: a.confirmationPhrase! } : {}),
          actor,
          via: "chat",
          mayConfirmDestructive,
        },
      );
      notes.push(
        decision === "approve"
          ? `The operator approved ${what} in chat (approval ${a.id}).`
          : `The operator rejected ${what} in chat (approval ${a.id}): rejected by the operator. Do not run it or a rephrasing of it; propose something else, or ask what they want instead if unsure.`,
      );
    } catch (err) {
      deps.log.warn({ err, approvalId: a.id }, "decision by chat not applied");
    }
  }
  return { notes, pending: pending.length };
}
