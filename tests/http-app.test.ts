// The HTTP skeleton, in-process: /healthz, JSON 404s, the validation pattern
// every route follows, body limits, and the bare 500 for the unexpected.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/app.js";
import { validate } from "../src/http/validate.js";
import { createLogger } from "../src/log/logger.js";
import { useTestDatabase } from "./helpers/database.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });

const databaseCheck = async () => {
  await t.db.sql`SELECT 1`;
  return { ok: true };
};

describe("GET /healthz", () => {
  it("answers 200 when the database is reachable", async () => {
    const app = createApp({ log, health: { database: databaseCheck } });
    const res = await app.request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", checks: { database: { ok: true } } });
  });

  it("answers 503 naming the failing check", async () => {
    const app = createApp({
      log,
      health: {
        database: databaseCheck,
        listener: () => {
          throw new Error("LISTEN connection lost");
        },
      },
    });
    const res = await app.request("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: "degraded",
      checks: { database: { ok: true }, listener: { ok: false, error: "LISTEN connection lost" } },
    });
  });
});

describe("errors", () => {
  // A route written the way every /api route is: validated input, typed use.
  const app = createApp({ log, health: {}, maxBodyBytes: 1000 });
  app.post("/api/echo", validate("json", z.object({ text: z.string().min(1), count: z.number().int() })), (c) =>
    c.json(c.req.valid("json")),
  );
  app.get("/api/boom", () => {
    throw new Error("SELECT secret FROM internals");
  });
  const post = (body: string) => app.request("/api/echo", { method: "POST", body, headers: { "content-type": "application/json" } });

  it("answers unknown routes with JSON 404", async () => {
    const res = await app.request("/api/nothing-here");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: "no route for GET /api/nothing-here" } });
  });

  it("answers 400 naming the bad field", async () => {
    const res = await post(JSON.stringify({ text: "hi", count: "three" }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { field: string; message: string } };
    expect(body.error.field).toBe("body.count");
    expect(body.error.message).toMatch(/^body\.count: .*number/);
  });

  it("answers 400 for malformed JSON", async () => {
    const res = await post("{not json");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: "bad_request" } });
  });

  it("answers 413 for a body over the limit", async () => {
    const res = await post(JSON.stringify({ text: "x".repeat(5000), count: 1 }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("answers the unexpected with a bare 500 that reveals nothing", async () => {
    const res = await app.request("/api/boom");
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("SELECT");
  });

  it("passes valid input through typed", async () => {
    const res = await post(JSON.stringify({ text: "hi", count: 3 }));
    expect(await res.json()).toEqual({ text: "hi", count: 3 });
  });
});
