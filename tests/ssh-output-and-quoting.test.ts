// The pieces under every command: capped head+tail capture with correct
// UTF-8 at every chunking and boundary, redaction, and quoting that a real
// shell reads back unchanged (property test through /bin/bash).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { CappedOutput } from "../src/ssh/capped-output.js";
import { shellQuote, UnquotableError } from "../src/ssh/quote.js";
import { makeRedactor } from "../src/ssh/redact.js";
import { buildRemoteCommand, containerCommand } from "../src/ssh/remote-command.js";

describe("CappedOutput", () => {
  it("keeps everything under the cap, decoding UTF-8 split at any chunk boundary", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), fc.array(fc.nat(), { maxLength: 10 }), (text, cuts) => {
        const bytes = Buffer.from(text);
        const out = new CappedOutput(1024);
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        let prev = 0;
        for (const p of [...points, bytes.length]) {
          out.push(bytes.subarray(prev, p));
          prev = p;
        }
        expect(out.result()).toEqual({ text, droppedBytes: 0 });
      }),
    );
  });

  it("keeps a byte-order mark, at the start of the output and at the start of the kept tail", () => {
    // TextDecoder drops a leading U+FEFF unless told not to; output is bytes
    // from a command, every one of which is kept or counted as dropped.
    const whole = new CappedOutput(1024);
    whole.push(Buffer.from("\uFEFFbom first"));
    expect(whole.result()).toEqual({ text: "\uFEFFbom first", droppedBytes: 0 });

    // A cap of 16 keeps 8 bytes of tail: the BOM (3 bytes) and "tail!".
    const cut = new CappedOutput(16);
    const bytes = Buffer.from(`head${"x".repeat(20)}\uFEFFtail!`);
    cut.push(bytes);
    const r = cut.result();
    const [head, tail] = r.text.split(/\n\[\.\.\. \d+ bytes dropped \.\.\.\]\n/);
    expect(tail).toBe("\uFEFFtail!");
    expect(Buffer.byteLength(head!) + Buffer.byteLength(tail!) + r.droppedBytes).toBe(bytes.length);
  });

  it("over the cap keeps valid UTF-8 head and tail and counts every dropped byte", () => {
    fc.assert(
      fc.property(
        // Inputs without U+FFFD of their own: the last assertion checks that
        // the cut never splits a character into a replacement one.
        fc.string({ unit: "grapheme", minLength: 50, maxLength: 300 }).filter((s) => !s.includes("\uFFFD")),
        fc.integer({ min: 16, max: 64 }),
        (text, cap) => {
          const bytes = Buffer.from(text);
          const out = new CappedOutput(cap);
          for (let i = 0; i < bytes.length; i += 7) out.push(bytes.subarray(i, i + 7));
          const r = out.result();
          if (bytes.length <= cap) return expect(r.text).toBe(text);
          const [head, tail] = r.text.split(/\n\[\.\.\. \d+ bytes dropped \.\.\.\]\n/);
          expect(text.startsWith(head!)).toBe(true);
          expect(text.endsWith(tail!)).toBe(true);
          expect(Buffer.byteLength(head!) + Buffer.byteLength(tail!) + r.droppedBytes).toBe(bytes.length);
          expect(r.text).not.toContain("\uFFFD");
        },
      ),
    );
  });
});

describe("redaction", () => {
  const redact = makeRedactor(["correct horse battery"]);
  it.each([
    ["the configured secret is correct horse battery", "the configured secret is [REDACTED]"],
    ["export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop", "export ANTHROPIC_API_KEY=[REDACTED]"],
    ["Authorization: Bearer abc.def.ghi", "Authorization: Bearer [REDACTED]"],
    ["postgres://nomos:pa55word@db:5432/nomos", "postgres://nomos:[REDACTED]@db:5432/nomos"],
    ["aws AKIAIOSFODNN7EXAMPLE key", "aws [REDACTED] key"],
    ["password: hunter22", "password: [REDACTED]"],
    ["-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[REDACTED PRIVATE KEY]"],
    ["-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn (cut by the cap)", "[REDACTED PRIVATE KEY]"],
    ["nothing secret here: status=active", "nothing secret here: status=active"],
  ])("%j", (input, expected) => {
    expect(redact(input)).toBe(expected);
  });
});

/** Runs a script in a real bash and returns its stdout. */
// HOME points at an empty folder: the login shells below (bash -lc, as pct
// exec runs) would otherwise read the user's own profile, which on a
// developer machine as root (pyenv, nvm...) took ~5 s each, so 40 runs
// outlasted the test's limit. The quoting under test does not depend on it.
const QUIET_HOME = mkdtempSync(join(tmpdir(), "nomos-quoting-home-"));
const bash = (script: string) =>
  execFileSync("/bin/bash", ["-c", script], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: QUIET_HOME } });
afterAll(() => rmSync(QUIET_HOME, { recursive: true, force: true }));
const anyText = fc.string({ unit: "binary", maxLength: 80 }).filter((s) => !s.includes("\0"));
const shellNasties = fc.constantFrom(
  "'",
  '"',
  "$(id)",
  "`id`",
  "\n",
  "-n",
  "--",
  "\\",
  "$HOME",
  "!",
  "*",
  ";",
  "|",
  " ",
  "é✓🚀",
  "'\\''",
  "${x:-y}",
  "\t",
  "#",
);
const nasty = fc.array(fc.oneof(anyText, shellNasties), { maxLength: 8 }).map((parts) => parts.join(""));

describe("quoting through a real shell", () => {
  it("shellQuote(s) reads back as exactly s", () => {
    fc.assert(
      fc.property(nasty, (s) => {
        expect(bash(`printf '%s' ${shellQuote(s)}`)).toBe(s);
      }),
      { numRuns: 150 },
    );
  });

  it("pct exec N -- bash -lc '<s>' runs exactly s inside (pct played by a shell function)", () => {
    fc.assert(
      fc.property(nasty, (s) => {
        const inner = `printf '%s' ${shellQuote(s)}`;
        // pct exec N -- cmd...  ->  run cmd... as words, as pct does.
        expect(bash(`pct() { shift 3; "$@"; }; ${containerCommand(105, inner)}`)).toBe(s);
      }),
      // Each run starts a login shell (~250 ms); the plain quoting above runs 150.
      { numRuns: 40 },
    );
  }, 120_000);

  it("the runner's full wrapper (timeout, pid line, pct exec) preserves the command", () => {
    fc.assert(
      fc.property(nasty, (s) => {
        const remote = buildRemoteCommand({ command: `printf '%s' ${shellQuote(s)}`, timeoutS: 30, vmid: 105 });
        expect(bash(`pct() { shift 3; "$@"; }; ${remote} 2>/dev/null`)).toBe(s);
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it("refuses a NUL byte, which no shell word can hold", () => {
    expect(() => shellQuote("a\0b")).toThrow(UnquotableError);
  });
});
