// Bad command output through the real path: the SSH double prints arbitrary
// bytes (ANSI escapes, invalid UTF-8, NUL, lone surrogates' encodings, RTL,
// megabytes); the runner captures, caps and redacts them; the row lands in
// PostgreSQL; the continuation note is built from it. Invariant: whatever a
// command prints, its execution reaches a terminal status with its output
// stored (never "internal error", never a crash), the stored text is valid
// for PostgreSQL (no NUL), and the note stays bounded.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executionNote, NOTE_OUTPUT_CHARS } from "../src/executions/execution-note.js";
import { executionCreate, executionGet } from "../src/executions/lifecycle.js";
import { ExecutionRunner } from "../src/executions/runner.js";
import { createLogger } from "../src/log/logger.js";
import { SshPool } from "../src/ssh/connection-pool.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { TargetRegistry } from "../src/targets/registry.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeSession } from "./helpers/factories.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const log = createLogger({ level: "silent" });
let host: SshTestHost;
let pool: SshPool;
let runner: ExecutionRunner;
const CAP = 64 * 1024;
const SECRET = "planted-redact-value-1234";

beforeAll(async () => {
  host = await SshTestHost.start();
  const registry = new TargetRegistry({ db: t.db.kysely, fileTargets: [host.targetsFileEntry()] });
  await registry.sync();
  pool = new SshPool({ log });
  runner = new ExecutionRunner({
    db: t.db,
    registry,
    pool,
    log,
    redact: makeRedactor([SECRET]),
    outputCapBytes: CAP,
    sweepEveryMs: 600_000,
  });
});
afterAll(async () => {
  await pool?.stop();
  await host?.stop();
});

// Output pieces a hostile or broken command may print.
const piece = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
  fc.constantFrom(
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "\x1b[2J\x1b[H",
    "\0",
    "a\0b",
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from([0xed, 0xa0, 0x80]), // an encoded lone surrogate (invalid UTF-8)
    "\u202eevil\u202c",
    "👩‍👩‍👧‍👦",
    `token=${SECRET}`,
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
  ),
);
const output = fc
  .array(piece, { maxLength: 12 })
  .map((parts) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p))));

let seq = 0;
async function runPrinting(stdout: Buffer, stderr: Buffer, sessionId: string | null) {
  const name = `emit-${++seq}`;
  host.handle(name, (ctx) => {
    ctx.out(stdout);
    ctx.err(stderr);
    return 3;
  });
  const e = await executionCreate(t.db.kysely, {
    sessionId,
    target: "pve1",
    command: name,
    risk: "read_only",
    mode: "sync",
    status: "approved",
  });
  return runner.runInline(e.id);
}

describe("command output of any bytes", () => {
  it("is stored whole-row, valid, redacted and terminal; the note stays bounded", async () => {
    const s = await makeSession(t.db.kysely);
    await fc.assert(
      fc.asyncProperty(output, output, async (out, err) => {
        const done = await runPrinting(out, err, s.id);
        expect(done.status, done.error ?? "").toBe("failed");
        expect(done.exit_code).toBe(3);
        expect(done.error).toBeNull();
        const row = (await executionGet(t.db.kysely, { executionId: done.id }))!;
        for (const text of [row.stdout, row.stderr]) {
          expect(text.includes("\0")).toBe(false);
          expect(text.includes(SECRET)).toBe(false);
          expect(text).not.toMatch(/BEGIN OPENSSH PRIVATE KEY-----\n/);
        }
        const note = executionNote(row);
        expect(note.length).toBeLessThan(2 * NOTE_OUTPUT_CHARS + 2000);
        expect(note.includes("\0")).toBe(false);
      }),
      { numRuns: 60 },
    );
    host.resetHandlers();
  });

  it("megabytes of binary with NULs are capped, stored and counted", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 131) & 0xff;
    const done = await runPrinting(Buffer.concat([big, Buffer.from("tail\0end\n")]), Buffer.from("err\0\n"), null);
    expect(done.status).toBe("failed");
    expect(done.error).toBeNull();
    const row = (await executionGet(t.db.kysely, { executionId: done.id }))!;
    expect(Buffer.byteLength(row.stdout)).toBeLessThan(CAP * 3 + 200);
    expect(Number(row.stdout_dropped_bytes)).toBeGreaterThan(big.length - CAP * 2);
    expect(row.stdout.includes("\0")).toBe(false);
    expect(row.stdout).toMatch(/tail\uFFFDend\n$/);
    host.resetHandlers();
  });
});

describe("a result that cannot be stored", () => {
  it("is recorded as failed saying why, never left running", async () => {
    // A redactor that corrupts one output (as a future bug might) makes the
    // row unstorable; the runner must still end the execution.
    const registry = new TargetRegistry({ db: t.db.kysely, fileTargets: [host.targetsFileEntry()] });
    const corrupting = new ExecutionRunner({
      db: t.db,
      registry,
      pool,
      log,
      redact: (s) => (s.includes("poison") ? `${s}\0` : s),
      sweepEveryMs: 600_000,
    });
    host.handle("poison-out", (ctx) => {
      ctx.out("poison\n");
      return 0;
    });
    const e = await executionCreate(t.db.kysely, {
      sessionId: null,
      target: "pve1",
      command: "poison-out",
      risk: "read_only",
      mode: "sync",
      status: "approved",
    });
    const done = await corrupting.runInline(e.id);
    expect(done.status).toBe("failed");
    expect(done.exit_code).toBe(0);
    expect(done.error).toMatch(/ran \(exit 0\) but its result could not be stored/);
    await corrupting.stop();
    host.resetHandlers();
  });
});
