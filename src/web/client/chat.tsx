/** @jsxImportSource hono/jsx/dom */
// One session's chat: loads the transcript and approvals, then replays and
// follows the event stream from the start (?after=0), so a refresh in the
// middle of a turn shows everything and keeps streaming. Every load retries
// with backoff while Nomos cannot be reached (retry.ts), so a session
// opened while the server is down loads by itself when it returns; a
// dropped stream is reopened by the page after the last event it applied
// (?after=), and the header's indicator says live, reconnecting or offline
// (connection.tsx). A 401 anywhere becomes the sign-in prompt (api.ts). The
// composer keeps a draft per session (drafts.ts) and takes the focus when
// the session opens; a reply is announced once finished (its article is a
// polite live region, busy while it streams) and a polite live region says
// when a card waits for a decision (live-region.ts). The assent badge shows the time left and Stop, which
// revokes the window and aborts the turn on the server.
import type { Child } from "hono/jsx";
import { useEffect, useRef, useState } from "hono/jsx/dom";
import type { PlanChecklistView } from "../../events/contract.js";
import { OPERATOR_EVENT_TYPES, SESSION_EVENT_TYPES } from "../../events/contract.js";
import { ApiError, api, humanError } from "./api.js";
import { backgroundNotice } from "./background-notices.js";
import { ApprovalCard, type CardContext, PlanCard } from "./cards.js";
import { ConnectionIndicator, type ConnectionState, OFFLINE_AFTER_TRIES } from "./connection.js";
import { draftGet, draftSet } from "./drafts.js";
import { focusComposer } from "./focus.js";
import { PlanSafetyNet, SnapshotCard } from "./guest-snapshots.js";
import { announcement } from "./live-region.js";
import { Markdown } from "./markdown.js";
import { type ChecklistState, checklistApply, emptyChecklist, PlanChecklist, ResultCard, stepLine, tokensText } from "./plan-checklist.js";
import { loadWithRetry, RetryClock } from "./retry.js";
import { can } from "./role.js";
import { type SessionStateHandlers, sessionStateFrame } from "./session-state.js";
import {
  type ApiEvent,
  type Approval,
  applyEvent,
  approvalFrom,
  type Execution,
  emptyTimeline,
  entries,
  runningTurn,
  type Timeline,
  type Turn,
} from "./timeline.js";
import { ToolCard } from "./tool-card.js";

interface SessionJson {
  id: string;
  title: string;
  assent: { open: boolean; expiresAt: string | null; scopeTargets?: string[] };
  assentMinutes?: number;
  plan?: PlanChecklistView | null;
  messages: { id: string; kind: string; content: unknown; createdAt: string }[];
  lastEventId?: string;
}

function left(expiresAt: string | null, now: number): string {
  if (!expiresAt) return "";
  const s = Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function AssentBar({
  t,
  sessionId,
  onAssent,
  checklist,
}: {
  t: Timeline;
  sessionId: string;
  onAssent(a: Timeline["assent"]): void;
  checklist: ChecklistState;
}) {
  const [now, setNow] = useState(Date.now());
  const [stopping, setStopping] = useState(false);
  const [showScope, setShowScope] = useState(false);
  const [stopped, setStopped] = useState("");
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const open = t.assent.open && (!t.assent.expiresAt || Date.parse(t.assent.expiresAt) > now);
  const running = runningTurn(t);
  // After the outcome the window is closed: no badge, no countdown, no Stop (the reporting turn only wraps up).
  const outcome = checklist.current?.outcome;
  if (!open && outcome && (!running || running.turnId === checklist.finishedTurnId)) {
    return (
      <div class={`assent off finished outcome-${outcome}`}>
        {outcome === "verified" ? "✓ Plan verified" : "⚠ Plan blocked"} · autonomy ended
      </div>
    );
  }
  if (!open && !running) {
    return (
      <div class="assent off">
        <span class="long">Nomos asks before acting</span>
        <span class="short">Asks first</span>
        {stopped && <span class="stopped-marker"> · {stopped}</span>}
      </div>
    );
  }
  const scope = t.assent.scopeTargets ?? [];
  const scopeText = `Autonomy covers ${scope.length > 0 ? scope.join(", ") : "no target"}; destructive steps not named in the plan and other targets still ask.`;
  return (
    <div class={`assent ${open ? "on" : "off"}`}>
      {open ? (
        <button type="button" class="badge" title={scopeText} onClick={() => setShowScope(!showScope)}>
          <span class="long">Autonomy on · </span>
          <span class="short">On · </span>
          <span class="time-left">{left(t.assent.expiresAt, now)}</span>
          <span class="long"> left</span>
        </button>
      ) : (
        <span class="badge">Working…</span>
      )}
      {can("operator") && (
        <button
          type="button"
          class="btn stop"
          disabled={stopping}
          onClick={async () => {
            setStopping(true);
            try {
              const r = await api<{ assent: { open: boolean; expiresAt: string | null }; stopped?: string }>(
                "DELETE",
                `/api/sessions/${sessionId}/assent`,
              );
              setStopped(r.stopped ?? "");
              onAssent({ open: r.assent.open, expiresAt: r.assent.expiresAt });
            } catch (err) {
              alert((err as Error).message);
            } finally {
              setStopping(false);
            }
          }}
        >
          ■ Stop
        </button>
      )}
      {open && showScope && <div class="assent-scope">{scopeText}</div>}
      {!open && stopped && <span class="stopped-marker">{stopped}</span>}
    </div>
  );
}

function TurnView({ turn, ctx, snapshots }: { turn: Turn; ctx: CardContext; snapshots: Timeline["snapshots"] }) {
  return (
    <article
      class={`turn ${turn.kind} st-${turn.status}`}
      data-turn={turn.turnId}
      aria-live="polite"
      aria-busy={turn.status === "running" ? "true" : "false"}
    >
      <h2 class="sr-only">Nomos</h2>
      {turn.kind === "continuation" && (
        <div class="system-start">
          ↻ Nomos continued on its own, nobody typed
          {turn.executionIds.length > 0 ? ` — ${finished(turn.executionIds, ctx)}` : turn.reason ? ` — ${turn.reason}` : ""}
        </div>
      )}
      {turn.parts.map((p) =>
        p.type === "text" ? (
          <Markdown text={p.text} />
        ) : p.type === "tool" ? (
          p.name === "propose_plan" ? null : (
            <ToolCard part={p} ctx={ctx} />
          )
        ) : p.type === "plan" ? (
          <div class="plan-with-net">
            <PlanCard part={p} ctx={ctx} />
            <PlanSafetyNet planId={p.planId} snapshots={snapshots} ctx={ctx} />
          </div>
        ) : p.type === "snapshot" ? (
          <SnapshotCard s={snapshots[p.snapshotId]} ctx={ctx} />
        ) : p.type === "approval" ? (
          <ApprovalCard approvalId={p.approvalId} ctx={ctx} />
        ) : p.type === "outcome" ? (
          <ResultCard part={p} />
        ) : (
          <div class="turn-error" role="alert">
            {p.message}
          </div>
        ),
      )}
      {turn.status === "running" && (
        <div class="typing" role="status" aria-label="Nomos is working">
          <i />
          <i />
          <i />
        </div>
      )}
      {turn.status === "aborted" && <div class="turn-note">Stopped by the operator.</div>}
      {turn.status === "failed" && <div class="turn-note">This turn failed.</div>}
    </article>
  );
}

/** "apt-get install -y nginx on web1 finished", for the steps whose results woke the agent. */
function finished(ids: string[], ctx: CardContext): string {
  const known = ids.flatMap((id) => (ctx.executions[id] ? [ctx.executions[id]!] : []));
  const unknown = ids.length - known.length;
  const parts = known.map((x) => `${x.command} on ${x.target} finished`);
  if (unknown > 0) parts.push(unknown === 1 ? "a step finished" : `${unknown} steps finished`);
  return parts.join("; ");
}

export function Chat({
  sessionId,
  listTitle,
  onChanged,
  states,
  onStreamless,
  lead,
}: {
  sessionId: string;
  listTitle?: string;
  onChanged(): void;
  /** Where this chat's stream hands the session list's session_state frames (one stream per tab). */
  states: SessionStateHandlers;
  /** This chat gave up (the session is gone, or loading failed for good) and holds no stream: the list must follow on its own. */
  onStreamless(sessionId: string): void;
  /** Shown first in the header row (the phone's ☰). */
  lead?: Child;
}) {
  const [t, setT] = useState<Timeline>(emptyTimeline());
  const [checklist, setChecklist] = useState<ChecklistState>(emptyChecklist());
  const [title, setTitle] = useState("");
  // The draft belongs to the session it was typed in: until this render's session
  // has its own state, the composer shows that session's stored draft, never the last one's.
  const [draft, setDraft] = useState({ sessionId, text: draftGet(sessionId) });
  const text = draft.sessionId === sessionId ? draft.text : draftGet(sessionId);
  const [sendError, setSendError] = useState("");
  const [loadError, setLoadError] = useState("");
  const [connection, setConnection] = useState<ConnectionState>("connecting");
  const [announce, setAnnounce] = useState("");
  const [clock] = useState(() => ({ current: undefined as RetryClock | undefined }));
  const bottom = useRef<HTMLDivElement>(null);
  // The title a background notification names, read when it is shown.
  const titleNow = useRef<string | undefined>(undefined);
  titleNow.current = listTitle ?? title;
  const follow = useRef(true);
  const statesTo = useRef(states);
  statesTo.current = states;
  const streamlessTo = useRef(onStreamless);
  streamlessTo.current = onStreamless;

  useEffect(() => {
    let es: EventSource | undefined;
    let closed = false;
    const retry = new RetryClock();
    clock.current = retry;
    // Events after this id happened while the page watched: they are announced.
    let liveAfter = -1n;
    let lastId = "0";
    setT(emptyTimeline());
    setDraft({ sessionId, text: draftGet(sessionId) });
    setSendError("");
    setLoadError("");
    setAnnounce("");
    setChecklist(emptyChecklist());
    setConnection("connecting");
    focusComposer();
    const onRetry = (attempt: number) =>
      setConnection(attempt >= OFFLINE_AFTER_TRIES ? "offline" : attempt > 1 || lastId !== "0" ? "reconnecting" : "connecting");
    const cancelled = () => closed;
    const refreshApprovals = async () => {
      const { approvals } = await api<{ approvals: Record<string, unknown>[] }>("GET", `/api/approvals?session=${sessionId}`);
      setT((prev) => {
        const merged = { ...prev.approvals };
        for (const a of approvals.map(approvalFrom)) merged[a.id] = a;
        return { ...prev, approvals: merged };
      });
    };
    const onEvent = (ev: MessageEvent) => {
      if (typeof ev.data !== "string") return;
      const e = JSON.parse(ev.data) as ApiEvent;
      if (BigInt(e.id) > BigInt(lastId)) lastId = e.id;
      const live = BigInt(e.id) > liveAfter;
      if (live) backgroundNotice(sessionId, titleNow.current, e);
      setChecklist((prev) => checklistApply(prev, e));
      setT((prev) => {
        const next = applyEvent(prev, e);
        const said = live && next !== prev ? announcement(next, e) : "";
        if (said) queueMicrotask(() => setAnnounce(said));
        return next;
      });
      if (e.type === "approval_requested" || e.type === "approval_decided") void refreshApprovals().catch(() => {});
      if (e.type === "turn_finished") onChanged();
    };
    // The stream, opened after the last applied event; on any error the page
    // closes it and reopens it itself, after checking the session (and the
    // login) with the same backoff as every load.
    const stream = () => {
      if (closed) return;
      // GET /api/events?session= carries this session's events and every
      // session's state (the list's), so a tab holds one stream.
      const source = new EventSource(`/api/events?session=${sessionId}&after=${lastId}`);
      es = source;
      source.addEventListener("ready", () => {
        setConnection("live");
        statesTo.current.onReady();
      });
      for (const type of SESSION_EVENT_TYPES) source.addEventListener(type, onEvent as EventListener);
      for (const type of OPERATOR_EVENT_TYPES)
        source.addEventListener(type, ((ev: MessageEvent) => sessionStateFrame(ev, statesTo.current)) as EventListener);
      source.onerror = () => {
        source.close();
        if (closed || es !== source) return;
        es = undefined;
        setConnection("reconnecting");
        void (async () => {
          await retry.wait(500);
          const back = await loadWithRetry(() => api<SessionJson>("GET", `/api/sessions/${sessionId}`), {
            clock: retry,
            cancelled,
            onRetry,
          });
          if (back && !closed) stream();
        })().catch(fail);
      };
    };
    const fail = (err: unknown) => {
      if (closed) return;
      streamlessTo.current(sessionId);
      setConnection("offline");
      setLoadError(err instanceof ApiError && err.status === 404 ? "This session was deleted or does not exist." : humanError(err));
    };
    void (async () => {
      const s = await loadWithRetry(() => api<SessionJson>("GET", `/api/sessions/${sessionId}`), { clock: retry, cancelled, onRetry });
      if (!s || closed) return;
      setTitle(s.title);
      liveAfter = BigInt(s.lastEventId ?? "0");
      const base = emptyTimeline();
      base.assent = s.assent;
      base.assentMinutes = s.assentMinutes ?? 30;
      base.operator = s.messages
        .filter((m) => m.kind === "operator")
        .map((m) => ({
          key: `m${m.id}`,
          at: m.createdAt,
          text: Array.isArray(m.content) ? m.content.map((b: { text?: string }) => b.text ?? "").join("") : String(m.content),
        }));
      setT(base);
      setChecklist({ ...emptyChecklist(), current: s.plan ?? null });
      await loadWithRetry(refreshApprovals, { clock: retry, cancelled, onRetry });
      stream();
    })().catch(fail);
    return () => {
      closed = true;
      retry.close();
      es?.close();
    };
  }, [sessionId]);

  useEffect(() => {
    if (follow.current) bottom.current?.scrollIntoView({ block: "end" });
  });

  const ctx: CardContext = {
    approvals: t.approvals,
    assentMinutes: t.assentMinutes,
    executions: t.executions,
    onApproval: (a: Approval) => {
      setT((prev) => ({ ...prev, approvals: { ...prev.approvals, [a.id]: { ...prev.approvals[a.id], ...a } } }));
      onChanged(); // the session list's pending count
    },
    onExecution: (x: Execution, options?: { ifAbsent?: boolean }) =>
      setT((prev) => (options?.ifAbsent && prev.executions[x.id] ? prev : { ...prev, executions: { ...prev.executions, [x.id]: x } })),
  };

  const edit = (value: string) => {
    setDraft({ sessionId, text: value });
    draftSet(sessionId, value);
  };

  const send = async () => {
    const words = text.trim();
    if (!words) return;
    setSendError("");
    edit("");
    const key = `local${Date.now()}`;
    setT((prev) => ({
      ...prev,
      operator: [
        ...prev.operator,
        {
          key,
          text: words,
          pending: true,
          local: true,
          at: prev.lastAt ? new Date(Date.parse(prev.lastAt) + 1).toISOString() : new Date().toISOString(),
        },
      ],
    }));
    follow.current = true;
    try {
      await api("POST", `/api/sessions/${sessionId}/messages`, { text: words });
      setT((prev) => ({ ...prev, operator: prev.operator.map((m) => (m.key === key ? { ...m, pending: false } : m)) }));
      onChanged();
    } catch (err) {
      setSendError(humanError(err));
      setT((prev) => ({ ...prev, operator: prev.operator.filter((m) => m.key !== key) }));
      edit(words);
    }
  };

  const list = entries(t);
  return (
    <div class="chat">
      <header class="chat-head">
        {lead}
        <h1 class="title">{listTitle ?? title}</h1>
        {!loadError && <ConnectionIndicator state={connection} onRetry={() => clock.current?.now()} />}
        <AssentBar t={t} sessionId={sessionId} checklist={checklist} onAssent={(assent) => setT((prev) => ({ ...prev, assent }))} />
        <div class="chat-sub">
          {stepLine(checklist.current) && <span class="step-line">{stepLine(checklist.current)}</span>}
          {checklist.current && <span class="plan-usage">{tokensText(checklist.current.usage)}</span>}
          <span class="export">
            Export <a href={`/api/sessions/${sessionId}/export?format=md`}>Markdown</a> ·{" "}
            <a href={`/api/sessions/${sessionId}/export?format=json`}>JSON</a>
          </span>
        </div>
      </header>
      <PlanChecklist checklist={checklist.current} snapshots={t.snapshots} />
      <div
        class="scroll"
        onScroll={(e: Event) => {
          const el = e.currentTarget as HTMLElement;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}
      >
        {loadError ? (
          <div class="empty form-error" role="alert">
            {loadError}
          </div>
        ) : list.length === 0 && connection === "offline" ? (
          <div class="empty">Nomos cannot be reached right now. This session loads by itself as soon as it answers.</div>
        ) : (
          list.length === 0 &&
          connection === "live" && <div class="empty">Ask Nomos for something: “Create a Debian container on pve1 running nginx”.</div>
        )}
        {list.map((e) =>
          e.kind === "operator" ? (
            <div class={`msg operator${e.message.pending ? " pending" : ""}`}>
              <h2 class="sr-only">You said</h2>
              <div class="bubble">{e.message.text}</div>
            </div>
          ) : (
            <TurnView turn={e.turn} ctx={ctx} snapshots={t.snapshots} />
          ),
        )}
        <div ref={bottom} />
      </div>
      <div class="sr-only" aria-live="polite" role="log" aria-label="Announcements">
        {announce}
      </div>
      {can("operator") && (
        <form
          class="composer"
          aria-label="Message Nomos"
          onSubmit={(e: Event) => {
            e.preventDefault();
            void send();
          }}
        >
          <textarea
            name="text"
            rows={2}
            aria-label="Message Nomos"
            placeholder="Message Nomos…  (Enter to send, Shift+Enter for a new line)"
            value={text}
            onInput={(e: Event) => edit((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e: KeyboardEvent) => {
              if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void send();
              }
            }}
          />
          <button class="btn send" type="submit" disabled={text.trim() === ""}>
            Send
          </button>
        </form>
      )}
      {sendError && (
        <div class="form-error" role="alert">
          {sendError}
        </div>
      )}
    </div>
  );
}
