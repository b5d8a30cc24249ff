// How guessable a new password is, judged by zxcvbn-ts (a maintained port of
// Dropbox's estimator) with its common-password and common-word lists. Used
// wherever a person chooses a password: the first-operator form,
// `npm run create-operator`, NOMOS_ADMIN_PASSWORD at start. Logins never
// judge: an existing password keeps working.
//
// Invariant: a refusal says why in words a person can act on, and never
// echoes the password.
import { ZxcvbnFactory } from "@zxcvbn-ts/core";
import { adjacencyGraphs, dictionary } from "@zxcvbn-ts/language-common";

/** zxcvbn's scale: 3 is "safely unguessable: moderate protection from offline slow-hash attacks". */
export const PASSWORD_MIN_SCORE = 3;
export const PASSWORD_MAX = 1024;

let estimator: ZxcvbnFactory | undefined;

/** Why zxcvbn-ts warns, in our words (its own texts need a translation package). */
const WARNINGS: Record<string, string> = {
  topTen: "it is one of the ten most used passwords",
  topHundred: "it is one of the hundred most used passwords",
  common: "it is a very common password",
  similarToCommon: "it is a small change to a very common password",
  wordByItself: "a single word is easy to guess",
  namesByThemselves: "names on their own are easy to guess",
  commonNames: "common names are easy to guess",
  userInputs: "it contains your username",
  straightRow: "it is a row of keys on the keyboard",
  keyPattern: "it is a short keyboard pattern",
  simpleRepeat: "it repeats characters",
  extendedRepeat: "it repeats a pattern",
  sequences: "it is a common sequence of characters",
  recentYears: "it contains a recent year",
  dates: "it contains a date",
};

/** Undefined when the password is strong enough; else a sentence saying why not. */
export function passwordProblem(password: string, context: { username?: string } = {}): string | undefined {
  if (password.length < 8) return "password must be at least 8 characters";
  if (password.length > PASSWORD_MAX) return `password must be at most ${PASSWORD_MAX} characters`;
  estimator ??= new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs });
  const result = estimator.check(password.slice(0, 256), context.username ? [context.username] : []);
  if (result.score >= PASSWORD_MIN_SCORE) return undefined;
  const why = (result.feedback.warning && WARNINGS[result.feedback.warning]) || "it would be guessed quickly";
  return `password is too easy to guess: ${why} (strength ${result.score} of 4, at least ${PASSWORD_MIN_SCORE} needed); a few unrelated words make a strong one`;
}
