// The typed errors of deciding an approval. The HTTP layer maps them:
// ApprovalNotFoundError -> 404, ApprovalAlreadyDecidedError (and its
// ApprovalExpiredError) -> 409, ApprovalConfirmationError -> 400 naming the
// field "confirmation", ApprovalRoleError -> 403.
export class ApprovalNotFoundError extends Error {
  override name = "ApprovalNotFoundError";
  constructor(readonly approvalId: string) {
    super(`approval ${approvalId} does not exist`);
  }
}

export class ApprovalAlreadyDecidedError extends Error {
  override name = "ApprovalAlreadyDecidedError";
  constructor(
    readonly approvalId: string,
    readonly status: string,
    message = `approval ${approvalId} was already ${status}; a decision is made once`,
  ) {
    super(message);
  }
}

export class ApprovalExpiredError extends ApprovalAlreadyDecidedError {
  override name = "ApprovalExpiredError";
  constructor(approvalId: string, expiresAt: Date) {
    super(approvalId, "expired", `approval ${approvalId} expired at ${expiresAt.toISOString()}; ask the agent to propose it again`);
  }
}

export class ApprovalConfirmationError extends Error {
  override name = "ApprovalConfirmationError";
  readonly field = "confirmation";
  constructor(
    readonly approvalId: string,
    readonly expected: string,
  ) {
    super(`approval ${approvalId} is for a destructive step: type "${expected}" in confirmation to approve it`);
  }
}

/** A destructive step's phrase from someone who may not confirm destructive steps (below admin). */
export class ApprovalRoleError extends Error {
  override name = "ApprovalRoleError";
  constructor(readonly approvalId: string) {
    super(`approval ${approvalId} is for a destructive step: only an admin can confirm it`);
  }
}
