// Runs a port call and turns its PortError into the HttpError the operator
// sees (404, 409, 400 naming the field); anything else stays a 500.
import { PortError } from "../api-deps.js";
import { HttpError } from "../http-error.js";

export async function viaPort<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof PortError) throw new HttpError(err.kind, err.message, err.field, { cause: err });
    throw err;
  }
}
