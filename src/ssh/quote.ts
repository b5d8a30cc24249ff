// Quoting for the POSIX shell. Invariant: for every string s without a NUL
// byte, a POSIX shell reading shellQuote(s) yields exactly s as one word:
// single quotes preserve everything but the single quote itself, which is
// written as '\'' (close, escaped quote, reopen). Proven by a property test
// through a real bash.

export class UnquotableError extends Error {
  override name = "UnquotableError";
}

export function shellQuote(s: string): string {
  if (s.includes("\0")) throw new UnquotableError("a command cannot contain a NUL byte");
  return `'${s.replaceAll("'", "'\\''")}'`;
}
