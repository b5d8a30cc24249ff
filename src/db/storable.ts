// What PostgreSQL can store as text and jsonb. Invariant: text refuses NUL
// (U+0000) and jsonb refuses NUL and lone UTF-16 surrogates, so a value
// holding one fails its whole INSERT. Input from people (the HTTP layer) and
// from the model's tool calls is refused naming the field (unstorablePath);
// text the system must keep whatever it holds (the model's replies, events)
// is made storable by replacing those characters with U+FFFD, as invalid
// UTF-8 is replaced when command output is decoded.

const UNSTORABLE = /\0|\p{Cs}/u;
const UNSTORABLE_ALL = /\0|\p{Cs}/gu;

/** The path of the first string (or object key) PostgreSQL could not store, if any. */
export function unstorablePath(value: unknown, path: string[] = [], depth = 0): string[] | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path : undefined;
  if (value === null || typeof value !== "object" || depth > 64) return undefined;
  for (const [key, v] of Object.entries(value)) {
    if (UNSTORABLE.test(key)) return [...path, key];
    const found = unstorablePath(v, [...path, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** A copy of `value` with NUL and lone surrogates in its strings and keys replaced by U+FFFD; the same value when it holds none. */
export function storableDeep<T>(value: T): T {
  if (unstorablePath(value) === undefined) return value;
  return fix(value) as T;
}

function fix(value: unknown): unknown {
  if (typeof value === "string") return value.replace(UNSTORABLE_ALL, "\uFFFD");
  if (Array.isArray(value)) return value.map(fix);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [fix(k) as string, fix(v)]));
}
