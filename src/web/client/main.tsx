/** @jsxImportSource hono/jsx/dom */
/// <reference lib="dom" />
// The page's entry: who is logged in (or the first-operator form when there
// is none), the session list, and the chat of the selected session (its id
// in the URL hash, so a refresh and the back button keep the place).
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import { api } from "./api.js";
import { BackgroundNotices } from "./background-notices.js";
import { Chat } from "./chat.js";
import { SnapshotsPage } from "./guest-snapshots.js";
import { can, type Role, setRole } from "./role.js";
import { type SessionState, StateChip, tabTitle, useSessionStates } from "./session-state.js";
import { NotificationSettings } from "./settings-notifications.js";

interface Me {
  operator: { username: string; role: Role } | null;
  needsSetup: boolean;
  notices: string[];
}

interface SessionItem {
  id: string;
  title: string;
  lastActivityAt: string;
  pendingApprovals: number;
  state?: SessionState;
}

function Login({ me, onDone }: { me: Me; onDone(): void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [setupCode, setSetupCode] = useState("");
  const [error, setError] = useState("");
  const setup = me.needsSetup;
  return (
    <main class="login">
      <form
        class="login-card"
        onSubmit={async (e: Event) => {
          e.preventDefault();
          setError("");
          try {
            await api("POST", setup ? "/api/setup" : "/api/login", setup ? { username, password, setupCode } : { username, password });
            onDone();
          } catch (err) {
            setError((err as Error).message);
          }
        }}
      >
        <h1>Nomos</h1>
        <p class="sub">
          {setup
            ? "Create the first operator account. The setup code is in the Nomos service log (look for “setup code”)."
            : "Log in to operate your homelab."}
        </p>
        {me.notices.map((n) => (
          <p class="notice">{n}</p>
        ))}
        {setup && (
          <label>
            Setup code
            <input
              name="setupCode"
              autocomplete="off"
              spellcheck={false}
              value={setupCode}
              onInput={(e: Event) => setSetupCode((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
        <label>
          Username
          <input
            name="username"
            autocomplete="username"
            value={username}
            onInput={(e: Event) => setUsername((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete={setup ? "new-password" : "current-password"}
            value={password}
            onInput={(e: Event) => setPassword((e.target as HTMLInputElement).value)}
          />
        </label>
        {error && (
          <div class="form-error" role="alert">
            {error}
          </div>
        )}
        <button class="btn primary" type="submit">
          {setup ? "Create operator" : "Log in"}
        </button>
      </form>
    </main>
  );
}

const hashSnapshots = () => location.hash === "#/snapshots";
const hashSession = () => /^#\/s\/([0-9a-f-]{36})$/.exec(location.hash)?.[1];
const hashSettings = () => location.hash === "#/settings";

function Workspace({ me, onLogout }: { me: Me; onLogout(): void }) {
  const [sessions, setSessions] = useState<SessionItem[]>([]);
  const [snapshotsView, setSnapshotsView] = useState(hashSnapshots());
  const [current, setCurrent] = useState<string | undefined>(hashSession());
  const [settings, setSettings] = useState(hashSettings());
  const [menu, setMenu] = useState(false);
  const known = useRef(new Set<string>());
  const load = async () => {
    const list = (await api<{ sessions: SessionItem[] }>("GET", "/api/sessions")).sessions;
    known.current = new Set(list.map((s) => s.id));
    setSessions(list);
  };
  useEffect(() => {
    void load();
    const onHash = () => {
      setSnapshotsView(hashSnapshots());
      setCurrent(hashSession());
      setSettings(hashSettings());
      setMenu(false);
    };
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  // Other sessions change too (a continuation asks for approval elsewhere): the operator-wide stream says so.
  useSessionStates(
    (u) => {
      // A session this list has not seen yet (created elsewhere): read the list again.
      if (!known.current.has(u.sessionId)) {
        void load().catch(() => {});
        return;
      }
      setSessions((prev) =>
        prev.map((s) =>
          s.id === u.sessionId
            ? { ...s, state: u.state, title: u.title, pendingApprovals: u.pendingApprovals, lastActivityAt: u.updatedAt }
            : s,
        ),
      );
    },
    () => void load().catch(() => {}),
  );
  useEffect(() => {
    document.title = tabTitle(sessions, current);
  }, [sessions, current]);
  const create = async () => {
    const { id } = await api<{ id: string }>("POST", "/api/sessions", {});
    await load();
    location.hash = `#/s/${id}`;
  };
  return (
    <div class={`app${menu ? " menu-open" : ""}`}>
      <aside class="sidebar">
        <div class="brand">
          <span>Nomos</span>
          {can("operator") && (
            <button type="button" class="btn small" onClick={create}>
              + New
            </button>
          )}
        </div>
        <nav class="sessions">
          {sessions.map((s) => (
            <a class={`session${s.id === current ? " current" : ""}`} href={`#/s/${s.id}`}>
              <span class="session-title">{s.title}</span>
              <StateChip state={s.state} />
              {s.pendingApprovals > 0 && (
                <span class="pending-count" title="approvals waiting">
                  {s.pendingApprovals}
                </span>
              )}
            </a>
          ))}
        </nav>
        <a class={`session${snapshotsView ? " current" : ""}`} href="#/snapshots" data-nav="snapshots">
          <span class="session-title">Snapshots</span>
        </a>
        <div class="who">
          <span>
            {me.operator?.username}
            {me.operator && me.operator.role !== "operator" && <span class="role"> ({me.operator.role})</span>}
          </span>
          <a class="btn small link" href="#/settings">
            Settings
          </a>
          <button
            type="button"
            class="btn small link"
            onClick={async () => {
              await api("POST", "/api/logout");
              onLogout();
            }}
          >
            Log out
          </button>
        </div>
      </aside>
      <section class="main">
        <button type="button" class="btn small menu-toggle" onClick={() => setMenu(!menu)} aria-label="Sessions">
          ☰
        </button>
        {snapshotsView && <SnapshotsPage />}
        {me.notices.map((n) => (
          <p class="notice">{n}</p>
        ))}
        {current && <BackgroundNotices sessionId={current} title={sessions.find((s) => s.id === current)?.title} />}
        {settings ? (
          <NotificationSettings />
        ) : current ? (
          <Chat sessionId={current} listTitle={sessions.find((s) => s.id === current)?.title} onChanged={() => void load()} />
        ) : snapshotsView ? null : (
          <div class="welcome">
            <p>{can("operator") ? "Pick a session, or start a new one." : "Pick a session to follow it (you may read, not act)."}</p>
            {can("operator") && (
              <button type="button" class="btn primary" onClick={create}>
                New session
              </button>
            )}
          </div>
        )}
      </section>
    </div>
  );
}

function App() {
  const [me, setMe] = useState<Me | undefined>();
  const [error, setError] = useState("");
  const refresh = () =>
    api<Me>("GET", "/api/me")
      .then(setMe)
      .catch((err: Error) => setError(err.message));
  useEffect(() => {
    void refresh();
  }, []);
  if (error) return <p class="boot form-error">Cannot reach Nomos: {error}</p>;
  if (!me) return <p class="boot">Loading Nomos…</p>;
  if (!me.operator) return <Login me={me} onDone={refresh} />;
  setRole(me.operator.role);
  return <Workspace me={me} onLogout={refresh} />;
}

render(<App />, document.getElementById("root")!);
