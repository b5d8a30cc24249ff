// The one exception type of the HTTP layer. A handler that wants to answer
// with an error throws HttpError; on-error.ts turns it into JSON
// {error: {code, message, field?}}. Invariant: messages are written for the
// person reading them and never contain internals (SQL, stack traces).
export type HttpErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "misdirected_request"
  | "too_many_requests"
  | "unavailable";

const STATUS: Record<HttpErrorCode, 400 | 401 | 403 | 404 | 409 | 413 | 421 | 429 | 503> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  misdirected_request: 421,
  too_many_requests: 429,
  unavailable: 503,
};

export class HttpError extends Error {
  override name = "HttpError";
  readonly status: (typeof STATUS)[HttpErrorCode];

  constructor(
    readonly code: HttpErrorCode,
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = STATUS[code];
  }

  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) } };
  }
}

export const notFound = (what: string, id: string) => new HttpError("not_found", `${what} ${id} does not exist`);
