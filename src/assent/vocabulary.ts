// The assent vocabulary: reads an operator's chat message as forward assent
// ("go ahead", "continue", "lgtm", ...), as a revocation ("stop", "wait",
// "hold on", "don't go ahead", "not yet", ...) or as neither.
//
// Invariants:
// - Only operator-authored text reaches this parser (Turns.chat calls it);
//   model text, system notes and command output never do, so none of them
//   can open a window.
// - When in doubt it answers "none" or "revoke", never "assent": a message
//   that both assents and revokes ("yes... actually wait") revokes; a
//   negated assent ("don't proceed") revokes; a question ("should I go
//   ahead?") assents to nothing; an assent word that is the object of a
//   sentence ("what does proceed mean") is not assent, because assent must
//   open its clause.
//
// A message is cut into clauses at punctuation and at "but"; each clause is
// classified on its own, then revocation wins over assent.

export type AssentReading = "assent" | "revoke" | "none";

export interface AssentResult {
  reading: AssentReading;
  /** The phrase that decided it, for the log and the event. */
  phrase: string | null;
}

/** Phrases that assent when they open a clause, whatever follows ("go ahead and fix it"). */
const ASSENT_OPENERS = [
  "go ahead",
  "go for it",
  "go on",
  "carry on",
  "keep going",
  "continue",
  "proceed",
  "do it",
  "yes",
  "yep",
  "yeah",
  "yup",
  "approved",
  "approve",
  "i approve",
  "lgtm",
  "looks good",
  "looks good to me",
  "sounds good",
  "ship it",
  "make it so",
  "confirmed",
  "confirm",
  "affirmative",
  "let's do it",
  "lets do it",
  "let's go",
  "lets go",
  "send it",
  "green light",
  "you have my approval",
  "you're approved",
  "you are approved",
];

/** Words that assent only when they are the whole clause ("go", "ok"), not "go to the docs". */
const ASSENT_ALONE = ["go", "ok", "okay", "k", "sure", "alright", "all right", "fine", "y", "👍", "+1"];

/** Phrases that revoke when they open a clause and nothing but filler follows ("stop", "wait please"). */
const REVOKE_OPENERS = [
  "stop",
  "wait",
  "hold on",
  "hold off",
  "hold it",
  "hold",
  "cancel",
  "abort",
  "halt",
  "pause",
  "freeze",
  "not yet",
  "not now",
  "no",
  "nope",
  "nah",
  "never mind",
  "nevermind",
  "never",
  "belay that",
  "stand down",
  "revoke",
  "don't",
  "do not",
  "dont",
  "kill it",
  "🛑",
];

/** Revoke phrases that revoke whatever follows them ("stop everything you're doing"). */
const REVOKE_ANYWAY = [
  "not yet",
  "not now",
  "hold on",
  "hold off",
  "never mind",
  "nevermind",
  "belay that",
  "stand down",
  "abort",
  "halt",
  "freeze",
];

/** Words that may follow a revocation without turning it into an instruction ("stop nginx" is an instruction). */
const FILLER = new Set([
  "please",
  "pls",
  "now",
  "right",
  "it",
  "that",
  "this",
  "everything",
  "all",
  "there",
  "for",
  "a",
  "moment",
  "sec",
  "second",
  "minute",
  "up",
  "nomos",
  "thanks",
  "thank",
  "you",
  "just",
  "immediately",
  "asap",
  "again",
  "then",
  "too",
  "sir",
  "mate",
  "man",
  "ok",
  "okay",
  "what",
  "you're",
  "doing",
  "are",
  "going",
  "on",
  "the",
  "plan",
  "with",
]);

/** Politeness and hedges that may come before an assent opener ("ok, go ahead", "please proceed"). */
const LEAD_IN = new Set([
  "ok",
  "okay",
  "alright",
  "sure",
  "please",
  "then",
  "so",
  "well",
  "fine",
  "right",
  "and",
  "good",
  "great",
  "cool",
  "yes",
  "just",
]);

/** Words a clause may open with that change nothing ("please stop", "nomos, wait", "um, go ahead"). */
const POLITE = new Set(["please", "pls", "hey", "nomos", "uh", "um", "oh", "ok", "okay", "so", "just", "then"]);

/** Negations that flip an assent opener into a revocation ("don't proceed", "do not go ahead", "never do it"). */
const NEGATIONS = ["don't", "dont", "do not", "not", "never", "no need to", "no", "don't you", "please don't", "please do not"];

/** "no problem, go ahead": lead-ins that look like a "no" but are not. */
const HARMLESS_NO = ["no problem", "no worries", "no objections", "no objection", "no complaints"];

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

function splitClauses(text: string): { words: string[]; question: boolean }[] {
  const out: { words: string[]; question: boolean }[] = [];
  // Keep the delimiter so a clause knows whether it was a question.
  for (const match of text.matchAll(/([^.,;:!?\n]+)([.,;:!?\n]*)/g)) {
    const question = match[2]!.includes("?");
    for (const part of match[1]!.split(/\bbut\b|\bhowever\b|\bactually\b/)) {
      const words = part
        .trim()
        .split(" ")
        .filter((w) => w !== "" && w !== "-" && w !== "—");
      if (words.length > 0) out.push({ words, question });
    }
  }
  return out;
}

const startsWith = (words: string[], phrase: string): boolean => {
  const p = phrase.split(" ");
  return p.length <= words.length && p.every((w, i) => words[i] === w);
};

const longestOpener = (words: string[], phrases: string[]): string | undefined =>
  phrases.filter((p) => startsWith(words, p)).sort((a, b) => b.length - a.length)[0];

function classifyClause(all: string[], question: boolean): AssentResult {
  let start = 0;
  while (start < all.length - 1 && POLITE.has(all[start]!)) start++;
  const words = all.slice(start);
  const joined = all.join(" ");
  const harmless = HARMLESS_NO.find((p) => startsWith(words, p));
  if (harmless) return classifyClause(words.slice(harmless.split(" ").length), question);

  // Negated revocations assent ("don't stop"), negated assent revokes ("don't go ahead").
  const negation = NEGATIONS.filter((n) => startsWith(words, n)).sort((a, b) => b.length - a.length)[0];
  if (negation) {
    const rest = words.slice(negation.split(" ").length);
    if (rest.length > 0 && ["stop", "wait", "hold back", "pause"].some((p) => startsWith(rest, p)) && rest.length <= 2) {
      return question ? { reading: "none", phrase: null } : { reading: "assent", phrase: joined };
    }
    // "not yet", "not now" and a bare "no"/"don't" are revocations on their own.
  }

  const revoke = longestOpener(words, REVOKE_OPENERS);
  if (revoke) {
    const rest = words.slice(revoke.split(" ").length);
    const negatedAssent = rest.length > 0 && longestOpener(rest, [...ASSENT_OPENERS, ...ASSENT_ALONE]) !== undefined;
    if (negatedAssent || REVOKE_ANYWAY.includes(revoke) || rest.every((w) => FILLER.has(w))) {
      return { reading: "revoke", phrase: joined };
    }
    return { reading: "none", phrase: null }; // "stop nginx", "cancel the cron job": instructions
  }
  if (question) return { reading: "none", phrase: null };

  // Skip lead-ins ("ok so please go ahead"), then look for an opener.
  let i = 0;
  while (i < words.length - 1 && LEAD_IN.has(words[i]!)) i++;
  const from = words.slice(i);
  const opener = longestOpener(from, ASSENT_OPENERS);
  if (opener) return { reading: "assent", phrase: opener };
  // "i approve"/"you may proceed"/"feel free to continue": a short subject before the opener.
  const softened = ["you may", "you can", "feel free to", "i'm happy for you to", "go ahead and"].find((p) => startsWith(from, p));
  if (softened && longestOpener(from.slice(softened.split(" ").length), ASSENT_OPENERS)) {
    return { reading: "assent", phrase: joined };
  }
  const alone = (w: string) => ASSENT_ALONE.includes(w);
  if (alone(from.join(" ")) || (all.every((w) => alone(w) || LEAD_IN.has(w)) && all.some(alone))) {
    return { reading: "assent", phrase: joined };
  }
  return { reading: "none", phrase: null };
}

/** Reads one operator message. */
export function assentParse(text: string): AssentResult {
  const clauses = splitClauses(normalize(text));
  let assent: AssentResult | undefined;
  for (const { words, question } of clauses) {
    const result = classifyClause(words, question);
    if (result.reading === "revoke") return result;
    if (result.reading === "assent") assent ??= result;
  }
  return assent ?? { reading: "none", phrase: null };
}
