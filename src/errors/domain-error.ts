// The one base class of the domain's errors. A rule that refuses says, in
// the caller's terms, which kind of refusal it is (not_found, conflict,
// bad_request, forbidden, unavailable) and, for bad input, which field;
// http/on-error.ts maps the kind to an HTTP status in one place, so no edge
// translates a domain error itself. Invariant: the message is written for
// the operator reading it (it is answered as is) and holds no internals.
export type DomainErrorKind = "not_found" | "conflict" | "bad_request" | "forbidden" | "unavailable";

export class DomainError extends Error {
  override name = "DomainError";
  readonly field: string | undefined;

  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    options?: { field?: string; cause?: unknown },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.field = options?.field;
  }
}
