// The typed errors of deciding an approval, each a DomainError of its kind
// (http/on-error.ts answers the kind): ApprovalNotFoundError not_found,
// ApprovalAlreadyDecidedError (and its ApprovalExpiredError) conflict,
// ApprovalConfirmationError bad_request naming the field "confirmation",
// ApprovalRoleError forbidden.
import { DomainError } from "../errors/domain-error.js";

export class ApprovalNotFoundError extends DomainError {
  override name = "ApprovalNotFoundError";
  constructor(readonly approvalId: string) {
    super("not_found", `approval ${approvalId} does not exist`);
  }
}

export class ApprovalAlreadyDecidedError extends DomainError {
  override name = "ApprovalAlreadyDecidedError";
  constructor(
    readonly approvalId: string,
    readonly status: string,
    message = `approval ${approvalId} was already ${status}; a decision is made once`,
  ) {
    super("conflict", message);
  }
}

export class ApprovalExpiredError extends ApprovalAlreadyDecidedError {
  override name = "ApprovalExpiredError";
  constructor(approvalId: string, expiresAt: Date) {
    super(approvalId, "expired", `approval ${approvalId} expired at ${expiresAt.toISOString()}; ask the agent to propose it again`);
  }
}

export class ApprovalConfirmationError extends DomainError {
  override name = "ApprovalConfirmationError";
  constructor(
    readonly approvalId: string,
    readonly expected: string,
  ) {
    super("bad_request", `approval ${approvalId} is for a destructive step: type "${expected}" in confirmation to approve it`, {
      field: "confirmation",
    });
  }
}

/** A destructive step's phrase from someone who may not confirm destructive steps (below admin). */
export class ApprovalRoleError extends DomainError {
  override name = "ApprovalRoleError";
  constructor(readonly approvalId: string) {
    super("forbidden", `approval ${approvalId} is for a destructive step: only an admin can confirm it`);
  }
}
