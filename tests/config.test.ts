// Configuration: defaults that run, and a bad value stopping start-up with
// one line that names the variable and what is wrong.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/env.js";

describe("loadConfig", () => {
  it("runs with nothing set, on the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      databaseUrl: undefined,
      dataDir: "./.nomos",
      http: { host: "127.0.0.1", port: 8080 },
      assentMinutes: 30,
      sweepSeconds: 60,
      maxIterations: 40,
      maxContinuations: 40,
      admin: undefined,
    });
  });

  it("treats an empty value as unset", () => {
    expect(loadConfig({ PORT: "", DATABASE_URL: " " }).http.port).toBe(8080);
  });

  it.each([
    [{ PORT: "eighty" }, /^configuration error: PORT must be a whole number from 0 to 65535 \(got "eighty"\)$/],
    [{ PORT: "70000" }, /^configuration error: PORT must be at most 65535 \(got "70000"\)$/],
    [{ DATABASE_URL: "mysql://x" }, /^configuration error: DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL$/],
    [{ NOMOS_ASSENT_MINUTES: "0" }, /NOMOS_ASSENT_MINUTES must be at least 1/],
    [{ NOMOS_API_TOKEN: "short" }, /^configuration error: NOMOS_API_TOKEN must be at least 16 characters[^"]*$/],
    [{ NOMOS_ADMIN_USER: "alice" }, /NOMOS_ADMIN_PASSWORD must be set together with/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ ANTHROPIC_BASE_URL: "not a url" }, /ANTHROPIC_BASE_URL must be an http:\/\/ or https:\/\/ URL/],
  ])("refuses %o in one line", (env, message) => {
    let thrown: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).not.toContain("\n");
  });

  it("names every bad variable at once", () => {
    expect(() => loadConfig({ PORT: "x", NOMOS_SWEEP_SECONDS: "-1" })).toThrow(/PORT .*; NOMOS_SWEEP_SECONDS/);
  });

  it("never echoes a secret back", () => {
    expect(() => loadConfig({ NOMOS_API_TOKEN: "hunter2" })).toThrow(/^(?!.*hunter2)/);
  });
});

describe("npm start with a bad environment", () => {
  it("prints one line naming the variable and exits 2, without a stack trace", () => {
    const result = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: { PATH: process.env.PATH, PORT: "not-a-port" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe('configuration error: PORT must be a whole number from 0 to 65535 (got "not-a-port")');
    expect(result.stdout).toBe("");
  });
});
