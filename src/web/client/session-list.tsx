/** @jsxImportSource hono/jsx/dom */
// The sidebar's sessions: a search box, then each session with its title,
// when it was last active ("5 min ago"), its live state when the server
// sends one (`state`, optional: idle, working, needs_approval, finished,
// blocked, failed), the count of approvals waiting, and Rename and Delete.
// Rename edits in place (Enter saves, Escape cancels); Delete asks first
// and is refused by the server, with its reason shown, while the session
// has anything in flight. Focus stays on the list after either.
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { api, humanError } from "./api.js";
import { relativeTime } from "./relative-time.js";
import { can } from "./role.js";

export type SessionState = "idle" | "working" | "needs_approval" | "finished" | "blocked" | "failed";

export interface SessionItem {
  id: string;
  title: string;
  createdAt?: string;
  lastActivityAt: string;
  pendingApprovals: number;
  /** Operator messages sent; 0 marks an empty session, which "+ New" reuses. */
  operatorMessages?: number;
  /** The session's state, live (issue 16); absent from servers that do not send it. */
  state?: SessionState;
}

function RenameForm({ s, onDone }: { s: SessionItem; onDone(error?: string): void }) {
  const [title, setTitle] = useState(s.title);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const saved = useRef(false);
  const save = async () => {
    // Enter submits, then the input's blur would save a second time.
    if (saved.current) return;
    saved.current = true;
    const t = title.trim();
    if (!t || t === s.title) return onDone();
    try {
      await api("PATCH", `/api/sessions/${s.id}`, { title: t });
      onDone();
    } catch (err) {
      onDone(humanError(err));
    }
  };
  return (
    <form
      class="rename"
      onSubmit={(e: Event) => {
        e.preventDefault();
        void save();
      }}
    >
      <input
        class="rename-input"
        aria-label="Session title"
        value={title}
        maxLength={200}
        ref={input}
        onInput={(e: Event) => setTitle((e.target as HTMLInputElement).value)}
        onKeyDown={(e: KeyboardEvent) => {
          if (e.key === "Escape") onDone();
        }}
        onBlur={() => void save()}
      />
    </form>
  );
}

export function SessionList({
  sessions,
  current,
  now,
  onChanged,
}: {
  sessions: SessionItem[];
  current: string | undefined;
  now: number;
  onChanged(): void;
}) {
  const [query, setQuery] = useState("");
  const [renaming, setRenaming] = useState<string | null>(null);
  const [error, setError] = useState("");
  const q = query.trim().toLowerCase();
  const shown = q ? sessions.filter((s) => s.title.toLowerCase().includes(q)) : sessions;
  const refocus = (id: string) =>
    setTimeout(() => document.querySelector<HTMLElement>(`.session-item[data-session="${id}"] a`)?.focus(), 0);
  const remove = async (s: SessionItem) => {
    setError("");
    if (!confirm(`Delete “${s.title}”? It leaves the list; what was done stays in the audit trail.`)) return;
    try {
      await api("DELETE", `/api/sessions/${s.id}`);
      if (s.id === current) location.hash = "#/";
      onChanged();
      setTimeout(() => document.querySelector<HTMLElement>(".new-session")?.focus(), 0);
    } catch (err) {
      setError(humanError(err));
    }
  };
  return (
    <div class="session-list">
      <input
        class="session-search"
        type="search"
        placeholder="Search sessions"
        aria-label="Search sessions"
        value={query}
        onInput={(e: Event) => setQuery((e.target as HTMLInputElement).value)}
      />
      {error && (
        <p class="list-error" role="alert">
          {error}
        </p>
      )}
      <ul class="sessions">
        {shown.map((s) => (
          <li class={`session-item${s.id === current ? " current" : ""}`} data-session={s.id}>
            {renaming === s.id ? (
              <RenameForm
                s={s}
                onDone={(err) => {
                  setRenaming(null);
                  if (err) setError(err);
                  onChanged();
                  refocus(s.id);
                }}
              />
            ) : (
              <a
                class={`session${s.id === current ? " current" : ""}`}
                href={`#/s/${s.id}`}
                aria-current={s.id === current ? "page" : undefined}
              >
                <span class="session-title">{s.title}</span>
                <span class="session-meta">
                  <time dateTime={s.lastActivityAt}>{relativeTime(s.lastActivityAt, now)}</time>
                  {s.state && s.state !== "idle" && (
                    <span class={`state-chip state-${s.state}`} data-state={s.state}>
                      {s.state.replace("_", " ")}
                    </span>
                  )}
                  {s.pendingApprovals > 0 && (
                    <span class="pending-count" title="approvals waiting">
                      {s.pendingApprovals}
                      <span class="sr-only"> approvals waiting</span>
                    </span>
                  )}
                </span>
              </a>
            )}
            {can("operator") && renaming !== s.id && (
              <span class="session-actions">
                <button
                  type="button"
                  class="icon-btn rename-btn"
                  aria-label={`Rename “${s.title}”`}
                  title="Rename"
                  onClick={() => setRenaming(s.id)}
                >
                  ✎
                </button>
                <button
                  type="button"
                  class="icon-btn delete-btn"
                  aria-label={`Delete “${s.title}”`}
                  title="Delete"
                  onClick={() => void remove(s)}
                >
                  ✕
                </button>
              </span>
            )}
          </li>
        ))}
      </ul>
      {q && shown.length === 0 && <p class="list-empty">No session matches “{query}”.</p>}
    </div>
  );
}
