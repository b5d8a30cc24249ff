// Bad input from the model, property-based: tool calls with arbitrary names
// and inputs (wrong types, missing and extra fields, NUL, lone surrogates,
// RTL marks, emoji, huge strings) and text with the same, through the real
// SDK, the agent loop and the tool runner. Invariant: the turn never
// crashes; a bad tool input comes back as an error tool_result naming the
// field; nothing the model sent is lost from the replayed history in a way
// that breaks the next turn; the session stays usable.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TOOL_NAMES, toolInputParse } from "../src/agent/tools.js";
import { scriptedPolicy } from "../src/model-double/messages-double.js";
import { useAgentHarness } from "./helpers/agent-harness.js";
import { useTestDatabase } from "./helpers/database.js";
import { makeNodeTarget } from "./helpers/db-executions-port.js";
import { makeSession } from "./helpers/factories.js";

const t = useTestDatabase();
const h = useAgentHarness(t);

const nasty = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("\0", "a\0b", "\ud800", "x\udfffy", "\u202eevil\u202c", "👩‍👩‍👧‍👦", "", "pve1", "uptime", "x".repeat(5000)),
);
const FIELDS = [
  "target",
  "command",
  "timeout_s",
  "description",
  "execution_id",
  "node",
  "hostname",
  "ostemplate",
  "vmid",
  "goal",
  "steps",
  "ip",
];
const value: fc.Arbitrary<unknown> = fc.oneof(
  nasty,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 2 }),
  fc.array(fc.dictionary(fc.constantFrom("title", "target", "command"), nasty, { maxKeys: 3 }), { maxLength: 2 }),
);
const toolInput = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), nasty), value, { maxKeys: 4 });

describe("tool inputs from the model", () => {
  it("toolInputParse never throws, and every refusal names the field and the tool", () => {
    fc.assert(
      fc.property(fc.constantFrom(...TOOL_NAMES), fc.oneof(toolInput, fc.anything()), (name, input) => {
        const r = toolInputParse(name, input);
        if (!r.ok) expect(r.error).toMatch(new RegExp(`^invalid input for ${name}: [^:]+: .+`));
      }),
      { numRuns: 2000 },
    );
  });

  it("through the loop: any tool call ends as a tool_result and the turn completes; the next turn replays it", async () => {
    await makeNodeTarget(t.db.kysely, "pve1");
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...TOOL_NAMES), nasty), toolInput, nasty, async (name, input, text) => {
        const s = await makeSession(t.db.kysely);
        h.double.setPolicy(
          scriptedPolicy([
            {
              content: [
                { type: "text", text: `calling ${text}` },
                { type: "tool_use", id: "toolu_fuzz", name, input },
              ],
            },
            { content: [{ type: "text", text: "done" }] },
            { content: [{ type: "text", text: "next turn fine" }] },
          ]),
        );
        const before = h.double.requests.length;
        const { turnId } = await h.turns.chat(s.id, "go", "operator:alice", { mayConfirmDestructive: true });
        await h.turns.idle(s.id);
        const turn = await t.db.kysely.selectFrom("turns").selectAll().where("id", "=", turnId).executeTakeFirstOrThrow();
        expect(turn.status, turn.error ?? "").toBe("completed");
        const second = h.double.requests[before + 1]!;
        const result = (
          second.messages.at(-1)!.content as Array<{ type: string; tool_use_id: string; content: string; is_error?: boolean }>
        )[0]!;
        expect(result).toMatchObject({ type: "tool_result", tool_use_id: "toolu_fuzz" });
        if (result.is_error) expect(result.content.length).toBeGreaterThan(10);
        if (!(TOOL_NAMES as string[]).includes(name)) expect(result.content).toContain("unknown tool");
        // The session stays usable: the next message replays this turn without error.
        const next = await h.turns.chat(s.id, "and now?", "operator:alice", { mayConfirmDestructive: true });
        await h.turns.idle(s.id);
        const nextTurn = await t.db.kysely.selectFrom("turns").selectAll().where("id", "=", next.turnId).executeTakeFirstOrThrow();
        expect(nextTurn.status, nextTurn.error ?? "").toBe("completed");
      }),
      { numRuns: 40 },
    );
  });
});
