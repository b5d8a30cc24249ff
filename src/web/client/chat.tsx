/** @jsxImportSource hono/jsx/dom */
// One session's chat: loads the transcript and approvals, then replays and
// follows the event stream from the start (?after=0), so a refresh in the
// middle of a turn shows everything and keeps streaming; if the connection
// drops, EventSource reconnects with Last-Event-ID and the server resumes
// after it. The composer sends messages; the assent badge shows the time
// left and Stop, which revokes the window and aborts the turn on the server.
import { useEffect, useRef, useState } from "hono/jsx/dom";
import type { PlanChecklistView } from "../../events/contract.js";
import { SESSION_EVENT_TYPES } from "../../events/contract.js";
import { api } from "./api.js";
import { ApprovalCard, type CardContext, PlanCard, ToolCard } from "./cards.js";
import { PlanSafetyNet, SnapshotCard } from "./guest-snapshots.js";
import { Markdown } from "./markdown.js";
import { type ChecklistState, checklistApply, emptyChecklist, PlanChecklist, ResultCard, stepLine, tokensText } from "./plan-checklist.js";
import { can } from "./role.js";
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

interface SessionJson {
  id: string;
  title: string;
  assent: { open: boolean; expiresAt: string | null; scopeTargets?: string[] };
  assentMinutes?: number;
  plan?: PlanChecklistView | null;
  messages: { id: string; kind: string; content: unknown; createdAt: string }[];
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
        Nomos asks before acting
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
          Autonomy on · <span class="time-left">{left(t.assent.expiresAt, now)}</span> left
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
    <article class={`turn ${turn.kind} st-${turn.status}`} data-turn={turn.turnId}>
      {turn.kind === "continuation" && (
        <div class="system-start">
          ↻ Started by Nomos, nobody typed
          {turn.executionIds.length > 0
            ? ` — execution ${turn.executionIds.map((id) => id.slice(0, 8)).join(", ")} finished`
            : turn.reason
              ? ` — ${turn.reason}`
              : ""}
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

export function Chat({ sessionId, listTitle, onChanged }: { sessionId: string; listTitle?: string; onChanged(): void }) {
  const [t, setT] = useState<Timeline>(emptyTimeline());
  const [checklist, setChecklist] = useState<ChecklistState>(emptyChecklist());
  const [title, setTitle] = useState("");
  const [text, setText] = useState("");
  const [sendError, setSendError] = useState("");
  const [connection, setConnection] = useState<"connecting" | "live" | "reconnecting">("connecting");
  const bottom = useRef<HTMLDivElement>(null);
  const follow = useRef(true);

  useEffect(() => {
    let es: EventSource | undefined;
    let closed = false;
    setT(emptyTimeline());
    setChecklist(emptyChecklist());
    setConnection("connecting");
    const refreshApprovals = async () => {
      const { approvals } = await api<{ approvals: Record<string, unknown>[] }>("GET", `/api/approvals?session=${sessionId}`);
      setT((prev) => {
        const merged = { ...prev.approvals };
        for (const a of approvals.map(approvalFrom)) merged[a.id] = a;
        return { ...prev, approvals: merged };
      });
    };
    void (async () => {
      const s = await api<SessionJson>("GET", `/api/sessions/${sessionId}`);
      if (closed) return;
      setTitle(s.title);
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
      await refreshApprovals();
      if (closed) return;
      es = new EventSource(`/api/sessions/${sessionId}/events?after=0`);
      es.addEventListener("ready", () => setConnection("live"));
      es.onerror = () => setConnection("reconnecting");
      const onEvent = (ev: MessageEvent) => {
        const e = JSON.parse(ev.data as string) as ApiEvent;
        setT((prev) => applyEvent(prev, e));
        setChecklist((prev) => checklistApply(prev, e));
        if (e.type === "approval_requested" || e.type === "approval_decided") void refreshApprovals();
        if (e.type === "turn_finished") onChanged();
      };
      for (const type of SESSION_EVENT_TYPES) es.addEventListener(type, onEvent as EventListener);
    })().catch((err: Error) => setSendError(err.message));
    return () => {
      closed = true;
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

  const send = async () => {
    const words = text.trim();
    if (!words) return;
    setSendError("");
    setText("");
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
      setSendError((err as Error).message);
      setT((prev) => ({ ...prev, operator: prev.operator.filter((m) => m.key !== key) }));
      setText(words);
    }
  };

  const list = entries(t);
  return (
    <div class="chat">
      <header class="chat-head">
        <h2 class="title">{listTitle ?? title}</h2>
        {connection !== "live" && <span class="conn">{connection}…</span>}
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
      <PlanChecklist checklist={checklist.current} />
      <div
        class="scroll"
        onScroll={(e: Event) => {
          const el = e.currentTarget as HTMLElement;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}
      >
        {list.length === 0 && <div class="empty">Ask Nomos for something: “Create a Debian container on pve1 running nginx”.</div>}
        {list.map((e) =>
          e.kind === "operator" ? (
            <div class={`msg operator${e.message.pending ? " pending" : ""}`}>
              <div class="bubble">{e.message.text}</div>
            </div>
          ) : (
            <TurnView turn={e.turn} ctx={ctx} snapshots={t.snapshots} />
          ),
        )}
        <div ref={bottom} />
      </div>
      {can("operator") && (
        <form
          class="composer"
          onSubmit={(e: Event) => {
            e.preventDefault();
            void send();
          }}
        >
          <textarea
            name="text"
            rows={2}
            placeholder="Message Nomos…  (Enter to send, Shift+Enter for a new line)"
            value={text}
            onInput={(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
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
