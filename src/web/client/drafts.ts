// What the operator typed and has not sent, kept per session in
// localStorage, so switching sessions (or reloading) never carries a draft
// into another session nor loses it. An empty draft is removed.
const key = (sessionId: string) => `nomos.draft.${sessionId}`;

export function draftGet(sessionId: string): string {
  try {
    return localStorage.getItem(key(sessionId)) ?? "";
  } catch {
    return "";
  }
}

export function draftSet(sessionId: string, text: string): void {
  try {
    if (text.trim() === "") localStorage.removeItem(key(sessionId));
    else localStorage.setItem(key(sessionId), text);
  } catch {
    // storage full or disabled: the draft lives only in the composer
  }
}
