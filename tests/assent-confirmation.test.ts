// Typed confirmation in chat (src/assent/confirmation.ts): a pending
// destructive step's phrase counts only when the message IS the
// confirmation. A table of what operators write, and a property test over
// generated messages that hold the phrase inside negations, questions,
// conditions, quotes of the agent and revocations: none of them confirms;
// the bare phrase and its affirmative forms always do.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { confirmationRead, rejectionRead } from "../src/assent/confirmation.js";

const PHRASE = "destroy 105";

describe("typed confirmation", () => {
  it.each([
    ["destroy 105", "confirms"],
    ["Destroy 105", "confirms"],
    ["DESTROY 105.", "confirms"],
    ['"destroy 105"', "confirms"],
    ["`destroy 105`", "confirms"],
    ["\u201cdestroy 105\u201d", "confirms"],
    ["confirm destroy 105", "confirms"],
    ["yes, destroy 105", "confirms"],
    ["Yes: destroy 105!", "confirms"],
    ["ok destroy 105 please", "confirms"],
    ["confirmed: destroy 105", "confirms"],
    ["go ahead, destroy 105", "confirms"],
    ["No! Do NOT destroy 105, that is the production database.", "mentions"],
    ["why would you destroy 105?", "mentions"],
    ["stop, do not destroy 105", "mentions"],
    ["don't destroy 105", "mentions"],
    ["never destroy 105", "mentions"],
    ["no destroy 105", "mentions"],
    ["destroy 105?", "mentions"],
    ["if it is empty, destroy 105", "mentions"],
    ["you said 'destroy 105' — explain first", "mentions"],
    ["wait, destroy 105 later", "mentions"],
    ["destroy 1050", "absent"],
    ["destroy 10", "absent"],
    ["go ahead", "absent"],
  ] as const)("%j %s", (text, expected) => {
    expect(confirmationRead(text, PHRASE)).toBe(expected);
  });

  const phrases = fc.oneof(
    fc.integer({ min: 100, max: 99999 }).map((n) => `destroy ${n}`),
    fc.constantFrom("reboot pve1", "confirm on typetype", "destroy tank/data"),
  );
  const decorate = fc.constantFrom(
    (p: string) => p,
    (p: string) => `"${p}"`,
    (p: string) => `\`${p}\``,
    (p: string) => p.toUpperCase(),
    (p: string) => `${p}.`,
    (p: string) => `${p}!`,
  );

  it("never confirms inside a negation, question, condition, quote of the agent or revocation", () => {
    const wrappers = fc.constantFrom(
      (p: string) => `don't ${p}`,
      (p: string) => `do not ${p}`,
      (p: string) => `Do NOT ${p}, that is production`,
      (p: string) => `never ${p}`,
      (p: string) => `no, ${p} is wrong`,
      (p: string) => `No! ${p}? no way`,
      (p: string) => `no ${p}`,
      (p: string) => `why would you ${p}?`,
      (p: string) => `should I ${p}?`,
      (p: string) => `${p}?`,
      (p: string) => `if the backup finished, ${p}`,
      (p: string) => `${p} if nobody uses it`,
      (p: string) => `only ${p} when the copy is done`,
      (p: string) => `you wrote "${p}", what does it do`,
      (p: string) => `the agent said '${p}'`,
      (p: string) => `stop, do not ${p}`,
      (p: string) => `wait, ${p} later`,
      (p: string) => `hold on, ${p}`,
      (p: string) => `cancel ${p}`,
      (p: string) => `not yet ${p}`,
    );
    fc.assert(
      fc.property(phrases, wrappers, decorate, (phrase, wrap, deco) => {
        expect(confirmationRead(wrap(deco(phrase)), phrase)).not.toBe("confirms");
      }),
      { numRuns: 500 },
    );
  });

  it("confirms the bare phrase and its plain affirmative forms, modulo case, quotes and punctuation", () => {
    const affirm = fc.constantFrom(
      (p: string) => p,
      (p: string) => `yes, ${p}`,
      (p: string) => `confirm ${p}`,
      (p: string) => `Confirm: ${p}`,
      (p: string) => `yes ${p} please`,
      (p: string) => `ok, ${p}.`,
    );
    fc.assert(
      fc.property(phrases, affirm, decorate, (phrase, form, deco) => {
        expect(confirmationRead(form(deco(phrase)), phrase)).toBe("confirms");
      }),
      { numRuns: 300 },
    );
  });

  it("reads a reject in chat only when it is one", () => {
    for (const yes of ["reject", "Reject.", "reject it", "deny that please", "no, reject"]) expect(rejectionRead(yes)).toBe(true);
    for (const no of ["reject?", "should I reject it?", "don't reject it", "reject the idea of a reboot and go ahead", "go ahead"]) {
      expect(rejectionRead(no)).toBe(false);
    }
  });
});
