// The assent vocabulary table: what an operator's words mean for the
// session's approvals and its assent window. Revocation beats assent, a
// negated assent revokes, questions and instructions assent to nothing.
import { describe, expect, it } from "vitest";
import { assentParse } from "../src/assent/vocabulary.js";

const TABLE: Array<[string, "assent" | "revoke" | "none"]> = [
  // forward assent
  ["continue", "assent"],
  ["Continue.", "assent"],
  ["go", "assent"],
  ["Go ahead", "assent"],
  ["go ahead and fix it", "assent"],
  ["proceed", "assent"],
  ["please proceed", "assent"],
  ["do it", "assent"],
  ["yes", "assent"],
  ["Yes, do it!", "assent"],
  ["yep", "assent"],
  ["approved", "assent"],
  ["I approve", "assent"],
  ["lgtm", "assent"],
  ["LGTM 👍", "assent"],
  ["ship it", "assent"],
  ["ok", "assent"],
  ["ok, go ahead", "assent"],
  ["sounds good, carry on", "assent"],
  ["no problem, go ahead", "assent"],
  ["you may proceed", "assent"],
  ["Nomos, go ahead", "assent"],
  ["don't stop", "assent"],
  ["continue with the install", "assent"],
  ["keep going", "assent"],
  // revocations
  ["stop", "revoke"],
  ["STOP!", "revoke"],
  ["wait", "revoke"],
  ["wait, what?", "revoke"],
  ["hold on", "revoke"],
  ["hold on, I need to check something first", "revoke"],
  ["cancel", "revoke"],
  ["cancel that", "revoke"],
  ["stop everything", "revoke"],
  ["please stop", "revoke"],
  ["abort", "revoke"],
  ["pause for a moment", "revoke"],
  ["never mind", "revoke"],
  ["no", "revoke"],
  ["nope", "revoke"],
  // negations
  ["don't go ahead", "revoke"],
  ["Don\u2019t proceed", "revoke"],
  ["do not continue", "revoke"],
  ["not yet", "revoke"],
  ["Not yet.", "revoke"],
  ["not now please", "revoke"],
  ["no, don't do it", "revoke"],
  ["never do it", "revoke"],
  ["please don't", "revoke"],
  // assent and revocation together: revocation wins
  ["yes but wait", "revoke"],
  ["go ahead. actually, hold on", "revoke"],
  ["ok... no, stop", "revoke"],
  // neither
  ["", "none"],
  ["what is the disk usage on pve1?", "none"],
  ["should I go ahead?", "none"],
  ["can we proceed?", "none"],
  ["what does proceed mean", "none"],
  ["stop nginx on web1", "none"],
  ["cancel the cron job on pve1", "none"],
  ["go to the logs and tell me what failed", "none"],
  ["thanks", "none"],
  ["ok thanks", "none"],
  ["the output said go ahead", "none"],
  ["install jellyfin in a new container", "none"],
];

describe("assent vocabulary", () => {
  it.each(TABLE)("%j reads as %s", (text, reading) => {
    expect(assentParse(text).reading).toBe(reading);
  });

  it("names the phrase that decided it", () => {
    expect(assentParse("please go ahead and fix it")).toEqual({ reading: "assent", phrase: "go ahead" });
    expect(assentParse("hmm, not yet")).toMatchObject({ reading: "revoke", phrase: "not yet" });
    expect(assentParse("tell me more")).toEqual({ reading: "none", phrase: null });
  });
});
