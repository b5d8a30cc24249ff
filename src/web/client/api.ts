// The page's calls to the API: same-origin fetch with the session cookie,
// JSON in and out, and an ApiError carrying the server's message (which
// names the field) so the page can show it where it belongs.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body !== undefined ? { "content-type": "application/json" } : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 204) return undefined as T;
  const json = (await res.json().catch(() => ({}))) as { error?: { message?: string; field?: string } };
  if (!res.ok) {
    throw new ApiError(res.status, json.error?.message ?? `${method} ${path} failed (${res.status})`, json.error?.field);
  }
  return json as T;
}
