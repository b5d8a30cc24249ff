// The pattern every route follows for input: zod schemas through
// @hono/zod-validator, and a failure becomes HttpError 400 whose message
// names the field ("body.text: expected string, received number"). A NUL
// character or a lone UTF-16 surrogate anywhere in valid input is refused
// the same way, naming its field: PostgreSQL cannot store them (text refuses
// NUL, jsonb refuses both), so they would otherwise fail deep in a write as
// a 500.
// Usage: app.post("/x", validate("json", schema), (c) => c.req.valid("json"))
import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z } from "zod";
import { HttpError } from "./http-error.js";

const WHERE: Partial<Record<keyof ValidationTargets, string>> = {
  json: "body",
  query: "query",
  param: "path",
  header: "header",
  form: "form",
  cookie: "cookie",
};

export function zodIssueMessage(issue: z.core.$ZodIssue, prefix?: string): string {
  const path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodType>(
  target: Target,
  schema: Schema,
) {
  return zValidator(target, schema, (result) => {
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = WHERE[target] ?? target;
      const field = issue ? [where, ...issue.path.map(String)].join(".") : where;
      throw new HttpError("bad_request", issue ? zodIssueMessage(issue, where) : `invalid ${where}`, field);
    }
    const bad = unstorablePath(result.data, []);
    if (bad) {
      const where = WHERE[target] ?? target;
      const field = [where, ...bad].join(".");
      throw new HttpError("bad_request", `${field}: must not contain a NUL character or a lone UTF-16 surrogate`, field);
    }
  });
}

const UNSTORABLE = /\0|\p{Cs}/u;

/** The path of the first string (or key) PostgreSQL could not store, if any. */
export function unstorablePath(value: unknown, path: string[], depth = 0): string[] | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : undefined;
  if (value === null || typeof value !== "object" || depth > 64) return undefined;
  for (const [key, v] of Object.entries(value)) {
    if (UNSTORABLE.test(key)) return [...path, key];
    const found = unstorablePath(v, [...path, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}
