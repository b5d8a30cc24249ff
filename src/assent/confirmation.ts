// Typed confirmation in chat: does this operator message confirm a
// destructive step's phrase ("destroy 105"), merely mention it, or neither?
//
// Invariants:
// - A message confirms only when it IS the confirmation: the phrase alone,
//   or with plain affirmatives before it ("yes, destroy 105", "confirm
//   destroy 105") and politeness after it ("destroy 105 please"), modulo
//   case, quotes and punctuation. Everything else that contains the phrase
//   is a mention, never a confirmation. This is an allowlist of shapes, so
//   a negation ("do NOT destroy 105"), a question ("why destroy 105?"), a
//   condition ("if it is empty, destroy 105"), a quote of the agent ("you
//   said 'destroy 105'") or a revocation can never confirm: none of them has
//   an allowed shape.
// - As a second guard, a message the assent vocabulary reads as a
//   revocation, or that asks a question, never confirms.
// - Rejecting in chat ("reject", "deny that") is read here too: it decides
//   the pending approvals as rejected and never touches the window.
import { assentParse } from "./vocabulary.js";

export type ConfirmationReading = "confirms" | "mentions" | "absent";

/** Words that may come before the phrase in a confirmation ("yes, confirm: destroy 105"). */
const AFFIRMATIVE_BEFORE = new Set([
  "yes",
  "yep",
  "yeah",
  "y",
  "ok",
  "okay",
  "sure",
  "confirm",
  "confirmed",
  "approve",
  "approved",
  "go",
  "ahead",
  "please",
  "affirmative",
  "do",
  "it",
]);

/** Words that may follow the phrase ("destroy 105 please", "destroy 105, confirmed"). */
const AFFIRMATIVE_AFTER = new Set(["please", "pls", "confirmed", "now", "thanks", "thank", "you", "go", "ahead", "yes"]);

/** Lowercase words, with quotes, backticks and punctuation gone. */
export function confirmationWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc\u201c\u201d«»]/g, " ")
    .replace(/[.,!?;:"'`()[\]{}*_~<>\u2014\u2013-]/g, " ")
    .split(/\s+/)
    .filter((w) => w !== "");
}

function indexOfPhrase(words: string[], phrase: string[]): number {
  outer: for (let i = 0; i + phrase.length <= words.length; i++) {
    for (let j = 0; j < phrase.length; j++) if (words[i + j] !== phrase[j]) continue outer;
    return i;
  }
  return -1;
}

/** Reads one operator message against one confirmation phrase. */
export function confirmationRead(text: string, confirmationPhrase: string): ConfirmationReading {
  const phrase = confirmationWords(confirmationPhrase);
  if (phrase.length === 0) return "absent";
  const words = confirmationWords(text);
  const at = indexOfPhrase(words, phrase);
  if (at < 0) return "absent";
  if (text.includes("?")) return "mentions";
  if (assentParse(text).reading === "revoke") return "mentions";
  // Exactly one occurrence: "destroy 105 destroy 105" is not a shape people confirm with.
  if (indexOfPhrase(words.slice(at + phrase.length), phrase) >= 0) return "mentions";
  const before = words.slice(0, at);
  const after = words.slice(at + phrase.length);
  const beforeOk = before.length <= 4 && before.every((w) => AFFIRMATIVE_BEFORE.has(w));
  const afterOk = after.length <= 3 && after.every((w) => AFFIRMATIVE_AFTER.has(w));
  return beforeOk && afterOk ? "confirms" : "mentions";
}

const REJECT_OPENERS = ["reject", "rejected", "deny", "denied", "decline", "declined", "i reject", "i decline"];
const REJECT_FILLER = new Set(["it", "that", "this", "them", "all", "please", "the", "plan", "step", "both", "everything"]);

/**
 * Whether the message rejects the pending approvals: it opens with a reject
 * word and nothing but filler follows ("reject", "deny that please"). A
 * question or anything longer ("reject the idea of a reboot?") is not.
 */
export function rejectionRead(text: string): boolean {
  if (text.includes("?")) return false;
  const words = confirmationWords(text);
  let i = 0;
  while (i < words.length && (words[i] === "please" || words[i] === "no" || words[i] === "nope")) i++;
  const rest = words.slice(i);
  const opener = REJECT_OPENERS.filter((o) => o.split(" ").every((w, k) => rest[k] === w)).sort((a, b) => b.length - a.length)[0];
  if (!opener) return false;
  return rest.slice(opener.split(" ").length).every((w) => REJECT_FILLER.has(w));
}
