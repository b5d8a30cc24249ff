// The page's calls to the API: same-origin fetch with the session cookie,
// JSON in and out, and an ApiError carrying the server's message (which
// names the field) so the page can show it where it belongs. Invariants:
// a 401 from any call (outside the login form itself) tells the page once,
// through the "nomos:unauthorized" window event, so a lapsed login becomes
// a sign-in prompt wherever it is noticed; a call that never reached the
// server is an ApiError with status 0 (`unreachable`), which loaders retry.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** The window event a 401 raises (main.tsx shows the sign-in prompt). */
export const UNAUTHORIZED_EVENT = "nomos:unauthorized";

/** True when the error says the server could not be reached (down, restarting, offline). */
export const unreachable = (err: unknown) => err instanceof ApiError && (err.status === 0 || err.status === 502 || err.status === 503);

/**
 * A message for a person: "body.password: must be at least 8 characters"
 * becomes "Password must be at least 8 characters".
 */
export function humanError(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 0) return "Nomos cannot be reached: check that it is running; the page retries by itself.";
  const prefix = /^(body|query|path|header|form|cookie)\.([\w.]+): /.exec(err.message);
  if (!prefix) return err.message.charAt(0).toUpperCase() + err.message.slice(1);
  const name = (prefix[2]!.split(".").at(-1) ?? "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase());
  const rest = err.message.slice(prefix[0].length);
  // "the setup code is missing" already names its field: it only needs a capital.
  if (rest.toLowerCase().includes(name.toLowerCase())) return rest.charAt(0).toUpperCase() + rest.slice(1);
  return `${name} ${rest}`;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body !== undefined ? { "content-type": "application/json" } : {},
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError(0, "Nomos cannot be reached");
  }
  if (res.status === 204) return undefined as T;
  const json = (await res.json().catch(() => ({}))) as { error?: { message?: string; field?: string } };
  if (!res.ok) {
    if (res.status === 401 && path !== "/api/login" && path !== "/api/setup") dispatchEvent(new Event(UNAUTHORIZED_EVENT));
    throw new ApiError(res.status, json.error?.message ?? `${method} ${path} failed (${res.status})`, json.error?.field);
  }
  return json as T;
}
