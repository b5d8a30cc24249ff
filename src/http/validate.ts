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
import { unstorablePath } from "../db/storable.js";
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

export function validate<Target extends keyof ValidationTargets, Schema extends z.ZodType>(target: Target, schema: Schema) {
  return zValidator(target, schema, (result) => {
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = WHERE[target] ?? target;
      const field = issue ? [where, ...issue.path.map(String)].join(".") : where;
      throw new HttpError("bad_request", issue ? zodIssueMessage(issue, where) : `invalid ${where}`, field);
    }
    const bad = unstorablePath(result.data);
    if (bad) {
      const where = WHERE[target] ?? target;
      const field = [where, ...bad].join(".");
      throw new HttpError("bad_request", `${field}: must not contain a NUL character or a lone UTF-16 surrogate`, field);
    }
  });
}
