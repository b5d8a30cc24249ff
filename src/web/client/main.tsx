/** @jsxImportSource hono/jsx/dom */
/// <reference lib="dom" />
// The page's entry: who is logged in (or the first-operator form when there
// is none), the session list, and the chat of the selected session (its id
// in the URL hash, so a refresh and the back button keep the place). Every
// load retries while Nomos cannot be reached (retry.ts); a 401 from any call
// brings back the sign-in form, saying the login lapsed, and signing in
// returns to the same session. Landmarks: the sidebar is the navigation, the
// chat is the main content; the theme (light, dark, or the system's) is
// applied before the first render.
import { render, useEffect, useRef, useState } from "hono/jsx/dom";
import { api, humanError, UNAUTHORIZED_EVENT } from "./api.js";
import { Chat } from "./chat.js";
import { focusComposer } from "./focus.js";
import { SnapshotsPage } from "./guest-snapshots.js";
import { Notices } from "./notice.js";
import { loadWithRetry, RetryClock } from "./retry.js";
import { can, type Role, setRole } from "./role.js";
import { type SessionItem, SessionList } from "./session-list.js";
import { type SessionStateHandlers, tabTitle, useSessionStates } from "./session-state.js";
import { NotificationSettings } from "./settings-notifications.js";
import { OperatorSettings } from "./settings-operators.js";
import { type Theme, themeApply, themeCurrent, themeSet } from "./theme.js";

interface Me {
  operator: { username: string; role: Role } | null;
  needsSetup: boolean;
  notices: string[];
}

/** Focuses the element once it is in the page (login's first field, on every showing of the form). */
const autofocus = (el: HTMLElement | null) => {
  if (el && !el.dataset.focused) {
    el.dataset.focused = "1";
    setTimeout(() => el.focus(), 0);
  }
};

function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(themeCurrent());
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      class="btn small link theme-toggle"
      aria-label={`Switch to ${next} mode`}
      title={`Switch to ${next} mode`}
      onClick={() => {
        themeSet(next);
        setTheme(next);
      }}
    >
      {theme === "dark" ? "☀ Light" : "☾ Dark"}
    </button>
  );
}

function Login({ me, lapsed, onDone }: { me: Me; lapsed: boolean; onDone(): void }) {
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
            setError(humanError(err));
          }
        }}
      >
        <h1>Nomos</h1>
        {lapsed && (
          <p class="notice lapsed" role="alert">
            Your sign-in has expired. Log in again to continue where you were.
          </p>
        )}
        <p class="sub">
          {setup
            ? "Create the first operator account. The setup code is in the Nomos service log (look for “setup code”)."
            : "Log in to operate your homelab."}
        </p>
        <Notices notices={me.notices} />
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
            ref={setup ? undefined : autofocus}
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
        <div class="login-foot">
          <ThemeToggle />
        </div>
      </form>
    </main>
  );
}

const hashSession = () => /^#\/s\/([0-9a-f-]{36})$/.exec(location.hash)?.[1];
const hashSettings = () => location.hash === "#/settings";
const hashSnapshots = () => location.hash === "#/snapshots";

/** The empty session "+ New" reuses, so empty "New session" entries never pile up. */
const emptySession = (sessions: SessionItem[]) => sessions.find((s) => s.operatorMessages === 0 && s.title === "New session");

function Workspace({ me, onLogout }: { me: Me; onLogout(): void }) {
  const [sessions, setSessions] = useState<SessionItem[]>([]);
  const [current, setCurrent] = useState<string | undefined>(hashSession());
  const [settings, setSettings] = useState(hashSettings());
  const [snapshotsView, setSnapshotsView] = useState(hashSnapshots());
  const known = useRef(new Set<string>());
  const [menu, setMenu] = useState(false);
  const [now, setNow] = useState(Date.now());
  const [error, setError] = useState("");
  const load = async () => {
    const list = (await api<{ sessions: SessionItem[] }>("GET", "/api/sessions")).sessions;
    known.current = new Set(list.map((s) => s.id));
    setSessions(list);
    setNow(Date.now());
    return list;
  };
  useEffect(() => {
    const clock = new RetryClock();
    let closed = false;
    void loadWithRetry(load, { clock, cancelled: () => closed, onRetry: () => {} }).catch(() => {});
    const onHash = () => {
      setCurrent(hashSession());
      setSettings(hashSettings());
      setSnapshotsView(hashSnapshots());
      setMenu(false);
    };
    addEventListener("hashchange", onHash);
    // The relative times ("5 min ago") move on.
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => {
      closed = true;
      clock.close();
      removeEventListener("hashchange", onHash);
      clearInterval(timer);
    };
  }, []);
  // Other sessions change too (a continuation asks for approval elsewhere): the operator-wide stream says so,
  // the list's own while no chat is open, else the chat's (one stream per tab).
  // A chat that gave up (its session deleted, say) holds no stream, so the list follows on its own again.
  const [streamless, setStreamless] = useState<string | undefined>(undefined);
  useEffect(() => setStreamless(undefined), [current]);
  const chatOpen = !settings && !snapshotsView && !!current && streamless !== current;
  const states: SessionStateHandlers = {
    onState: (u) => {
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
    onReady: () => void load().catch(() => {}),
  };
  useSessionStates(states, !chatOpen);
  useEffect(() => {
    document.title = tabTitle(sessions, current);
  }, [sessions, current]);
  const create = async () => {
    setError("");
    try {
      const reuse = emptySession(await load());
      const id = reuse?.id ?? (await api<{ id: string }>("POST", "/api/sessions", {})).id;
      if (!reuse) await load();
      location.hash = `#/s/${id}`;
      setMenu(false);
      setTimeout(focusComposer, 0);
    } catch (err) {
      setError(humanError(err));
    }
  };
  // On a phone the sidebar folds away behind ☰, which sits in the chat's header row.
  const menuButton = (
    <button type="button" class="btn small menu-toggle" onClick={() => setMenu(!menu)} aria-label="Sessions" aria-expanded={menu}>
      ☰
    </button>
  );
  return (
    <div class={`app${menu ? " menu-open" : ""}`}>
      <nav class="sidebar" aria-label="Sessions">
        <div class="brand">
          <span>Nomos</span>
          {can("operator") && (
            <button type="button" class="btn small new-session" onClick={create}>
              + New
            </button>
          )}
        </div>
        {error && (
          <p class="list-error" role="alert">
            {error}
          </p>
        )}
        <SessionList sessions={sessions} current={current} now={now} onChanged={() => void load().catch(() => {})} />
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
          <ThemeToggle />
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
      </nav>
      <main class="main">
        <Notices notices={me.notices} />
        {settings ? (
          <div class="settings-page">
            <h1 class="sr-only">Settings</h1>
            {menuButton}
            <NotificationSettings />
            {can("admin") && <OperatorSettings self={me.operator?.username ?? ""} />}
          </div>
        ) : snapshotsView ? (
          <div class="snapshots-view">
            {menuButton}
            <SnapshotsPage />
          </div>
        ) : current ? (
          <Chat
            sessionId={current}
            listTitle={sessions.find((s) => s.id === current)?.title}
            onChanged={() => void load().catch(() => {})}
            states={states}
            onStreamless={setStreamless}
            lead={menuButton}
          />
        ) : (
          <div class="welcome">
            {menuButton}
            <h1 class="sr-only">Nomos</h1>
            <p>{can("operator") ? "Pick a session, or start a new one." : "Pick a session to follow it (you may read, not act)."}</p>
            {can("operator") && (
              <button type="button" class="btn primary" onClick={create}>
                New session
              </button>
            )}
          </div>
        )}
      </main>
    </div>
  );
}

function App() {
  const [me, setMe] = useState<Me | undefined>();
  const [lapsed, setLapsed] = useState(false);
  const [retrying, setRetrying] = useState(false);
  const [error, setError] = useState("");
  const refresh = async () => {
    const clock = new RetryClock();
    try {
      const who = await loadWithRetry(() => api<Me>("GET", "/api/me"), { clock, cancelled: () => false, onRetry: () => setRetrying(true) });
      setRetrying(false);
      if (who) setMe(who);
    } catch (err) {
      setError(humanError(err));
    } finally {
      clock.close();
    }
  };
  useEffect(() => {
    void refresh();
    // The login lapsed (a 401 from any call): back to the sign-in form, which says so.
    const onLapse = () => {
      setLapsed(true);
      setMe((m) => (m?.operator ? { ...m, operator: null } : m));
    };
    addEventListener(UNAUTHORIZED_EVENT, onLapse);
    return () => removeEventListener(UNAUTHORIZED_EVENT, onLapse);
  }, []);
  if (error) return <p class="boot form-error">Cannot reach Nomos: {error}</p>;
  if (!me) return <p class="boot">{retrying ? "Nomos cannot be reached yet; retrying…" : "Loading Nomos…"}</p>;
  if (!me.operator)
    return (
      <Login
        me={me}
        lapsed={lapsed}
        onDone={() => {
          setLapsed(false);
          void refresh();
        }}
      />
    );
  setRole(me.operator.role);
  return <Workspace me={me} onLogout={refresh} />;
}

themeApply();
render(<App />, document.getElementById("root")!);
