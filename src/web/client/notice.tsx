/** @jsxImportSource hono/jsx/dom */
// A notice from the server (the demo, a missing model key) that the
// operator can dismiss; dismissed notices stay dismissed in this browser
// (localStorage, by the notice's text, so a new notice shows again). The
// notices sit in one wrapper element: a component returning a fragment
// whose length changes made hono/jsx/dom mount the next sibling component
// twice (seen with the background notifications' stream).
import { useState } from "hono/jsx/dom";

const key = (text: string) => `nomos.notice.${text.slice(0, 80)}`;

const dismissed = (text: string) => {
  try {
    return localStorage.getItem(key(text)) === "dismissed";
  } catch {
    return false;
  }
};

export function Notices({ notices }: { notices: string[] }) {
  const [hidden, setHidden] = useState<string[]>(() => notices.filter(dismissed));
  return (
    <div class="notices">
      {notices
        .filter((n) => !hidden.includes(n))
        .map((n) => (
          <div class="notice" role="note">
            <span class="notice-text">{n}</span>
            <button
              type="button"
              class="btn small link dismiss"
              aria-label="Dismiss this notice"
              onClick={() => {
                try {
                  localStorage.setItem(key(n), "dismissed");
                } catch {
                  // dismissed for this page only
                }
                setHidden([...hidden, n]);
              }}
            >
              ✕
            </button>
          </div>
        ))}
    </div>
  );
}
