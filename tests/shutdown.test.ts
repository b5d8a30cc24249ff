// The process's one shutdown (src/shutdown.ts): every stop runs once, newest
// first, and the exit code tells a process manager whether anything failed,
// including a crash that arrives while the stops are running.
import { describe, expect, it } from "vitest";
import { createLogger } from "../src/log/logger.js";
import { shutdownOnce } from "../src/shutdown.js";

const log = createLogger({ level: "silent" });

function harness() {
  const ran: string[] = [];
  const exits: number[] = [];
  let release = () => {};
  const draining = new Promise<void>((r) => {
    release = r;
  });
  return { ran, exits, draining, release: () => release(), exit: (code: number) => void exits.push(code) };
}

describe("shutting down", () => {
  it("runs each stop once, newest first, and exits 0 on a signal", async () => {
    const h = harness();
    const shutdown = shutdownOnce(log, [async () => void h.ran.push("database"), async () => void h.ran.push("http")], h.exit);
    await Promise.all([shutdown("SIGTERM"), shutdown("SIGINT")]);
    expect(h.ran).toEqual(["http", "database"]);
    expect(h.exits).toEqual([0]);
  });

  it("exits 1 when a stop fails", async () => {
    const h = harness();
    const shutdown = shutdownOnce(log, [async () => void h.ran.push("database"), async () => Promise.reject(new Error("stuck"))], h.exit);
    await shutdown("SIGTERM");
    expect(h.ran).toEqual(["database"]);
    expect(h.exits).toEqual([1]);
  });

  it("exits 1 when a crash arrives while a signal's shutdown is draining", async () => {
    const h = harness();
    const shutdown = shutdownOnce(log, [() => h.draining], h.exit);
    const bySignal = shutdown("SIGTERM");
    // An unhandled rejection during the drain (main.ts asks for code 1): nothing runs twice, but the code sticks.
    await shutdown("unhandled rejection", 1);
    expect(h.exits).toEqual([]);
    h.release();
    await bySignal;
    expect(h.exits).toEqual([1]);
  });
});
