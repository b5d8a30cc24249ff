// NOMOS_NOTIFY_* (DESIGN.md's configuration): validated at start, refused
// with one line naming the variable, secrets never echoed back.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/env.js";

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return "accepted";
};

describe("notification configuration", () => {
  it("takes a signed webhook and an ntfy topic for the first operator", () => {
    const config = loadConfig({
      NOMOS_NOTIFY_WEBHOOK_URL: "https://ha.home.arpa/api/webhook/nomos",
      NOMOS_NOTIFY_WEBHOOK_SECRET: "0123456789abcdef0123",
      NOMOS_NOTIFY_NTFY_URL: "https://ntfy.sh/homelab-ops",
      NOMOS_NOTIFY_NTFY_TOKEN: "tk_secret",
    });
    expect(config.notify).toEqual({
      webhook: { url: "https://ha.home.arpa/api/webhook/nomos", secret: "0123456789abcdef0123" },
      ntfy: { url: "https://ntfy.sh/homelab-ops", token: "tk_secret" },
    });
    // Secrets are redacted from command output like the others.
    expect(config.executions.secrets).toEqual(expect.arrayContaining(["0123456789abcdef0123", "tk_secret"]));
    expect(loadConfig({}).notify).toEqual({ webhook: undefined, ntfy: undefined });
  });

  it("refuses a bad URL, a short or missing secret, and a secret without its URL, naming the variable", () => {
    expect(refusal({ NOMOS_NOTIFY_WEBHOOK_URL: "ftp://x", NOMOS_NOTIFY_WEBHOOK_SECRET: "0123456789abcdef" })).toMatch(
      /^configuration error: NOMOS_NOTIFY_WEBHOOK_URL must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(refusal({ NOMOS_NOTIFY_WEBHOOK_URL: "https://ha.home.arpa/hook" })).toMatch(
      /NOMOS_NOTIFY_WEBHOOK_SECRET must be set when NOMOS_NOTIFY_WEBHOOK_URL is/,
    );
    const short = refusal({ NOMOS_NOTIFY_WEBHOOK_URL: "https://ha.home.arpa/hook", NOMOS_NOTIFY_WEBHOOK_SECRET: "hunter2" });
    expect(short).toMatch(/NOMOS_NOTIFY_WEBHOOK_SECRET must be at least 16 characters/);
    expect(short).not.toContain("hunter2");
    expect(refusal({ NOMOS_NOTIFY_WEBHOOK_SECRET: "0123456789abcdef" })).toMatch(
      /NOMOS_NOTIFY_WEBHOOK_URL must be set when NOMOS_NOTIFY_WEBHOOK_SECRET is/,
    );
    expect(refusal({ NOMOS_NOTIFY_NTFY_URL: "ntfy.sh/topic" })).toMatch(/NOMOS_NOTIFY_NTFY_URL must be an http:\/\/ or https:\/\/ URL/);
    expect(refusal({ NOMOS_NOTIFY_NTFY_TOKEN: "tk_x" })).toMatch(/NOMOS_NOTIFY_NTFY_URL must be set when NOMOS_NOTIFY_NTFY_TOKEN is/);
  });

  it("npm start refuses a short webhook secret with one line and exit code 2", () => {
    const result = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: { PATH: process.env.PATH, NOMOS_NOTIFY_WEBHOOK_URL: "https://ha.home.arpa/hook", NOMOS_NOTIFY_WEBHOOK_SECRET: "short-one" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe(
      "configuration error: NOMOS_NOTIFY_WEBHOOK_SECRET must be at least 16 characters (it signs every webhook: X-Nomos-Signature)",
    );
    expect(result.stdout).toBe("");
  });
});
