// The one-time setup code: while no operator exists, the page's first-
// operator form needs it, and only the service's log shows it (main.ts
// prints it at start). Someone who can reach the port but cannot read the
// log (a web page in the owner's browser, a neighbour on the LAN) therefore
// cannot claim a fresh instance. Each process makes its own code; it is
// never stored, and a restart makes a new one.
//
// Invariant: codes are compared in constant time after normalising what a
// person might retype differently (case, dashes, spaces).
import { createHash, randomInt, timingSafeEqual } from "node:crypto";

/** No 0/O, 1/I/L: read from a log, typed by hand. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** 12 characters from 31: about 59 bits, and throttled per source besides. */
export function setupCodeNew(): string {
  const chars = Array.from({ length: 12 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4, 8).join("")}-${chars.slice(8).join("")}`;
}

const normal = (code: string) => code.toUpperCase().replace(/[\s-]/g, "");
const digest = (code: string) => createHash("sha256").update(normal(code)).digest();

export function setupCodeMatches(expected: string, given: string): boolean {
  return timingSafeEqual(digest(expected), digest(given));
}
