/** @jsxImportSource hono/jsx/dom */
/// <reference lib="dom" />
// The safety net on the page (issue 17): a snapshot card in the turn that
// took it and under the plan it protects ("Safety net: snapshot <name> of
// <guest>", or "No safety net on this guest: <why>"), with "Roll back
// <guest> to before this plan"; and the snapshots view (#/snapshots): per
// guest, Nomos's snapshots with their plan and a link to the session.
// Invariant: the button only asks for the rollback; the rollback is a
// destructive approval card, confirmed with its typed phrase like any
// destructive step, and nothing here runs anything.
import { useEffect, useState } from "hono/jsx/dom";
import type { SnapshotView } from "../../events/contract.js";
import { api } from "./api.js";
import type { CardContext } from "./cards.js";
import { can } from "./role.js";
import { type Approval, approvalFrom } from "./timeline.js";

const WAITING = new Set(["pending_approval", "approved", "running"]);

const when = (iso: string) => new Date(iso).toLocaleString();

export function headline(s: SnapshotView): string {
  switch (s.state) {
    case "taken":
      if (s.rollback?.status === "completed") return `Rolled back: ${s.target} was put back to snapshot ${s.name}`;
      return `Safety net: snapshot ${s.name} of ${s.target}`;
    case "rolled_back":
      return `Rolled back: ${s.target} was put back to snapshot ${s.name}`;
    case "removed":
      return `Snapshot ${s.name} of ${s.target} removed by retention`;
    case "unsupported":
      return `No safety net on this guest: ${s.reason ?? "its storage cannot snapshot"}`;
    case "failed":
      return `No safety net on this guest: the snapshot of ${s.target} failed`;
  }
}

function RollbackButton({ s, onApproval }: { s: SnapshotView; onApproval?: (a: Approval) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  if (s.state !== "taken" && s.state !== "rolled_back") return null;
  if (!can("operator")) return null;
  if (s.rollback && WAITING.has(s.rollback.status)) {
    return (
      <span class="chip st-pending_approval" data-rollback-waiting={s.id}>
        rollback {s.rollback.status.replace("_", " ")}
      </span>
    );
  }
  return (
    <span>
      <button
        type="button"
        class="btn small danger-outline"
        data-rollback={s.id}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError("");
          try {
            const res = await api<{ approval: Record<string, unknown> }>("POST", `/api/snapshots/${s.id}/rollback`);
            const approval = approvalFrom(res.approval);
            if (onApproval) {
              onApproval(approval);
              // The approval card (with its typed phrase) is in the turn that took the snapshot.
              setTimeout(() => document.querySelector(`[data-approval="${approval.id}"]`)?.scrollIntoView({ block: "center" }), 50);
            } else location.hash = `#/s/${s.sessionId}`;
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        Roll back {s.target} to before this plan
      </button>
      {error && (
        <span class="form-error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

/** One snapshot, as a line in a turn or under its plan. */
export function SnapshotCard({ s: row, ctx }: { s: SnapshotView | undefined; ctx?: CardContext }) {
  if (!row) return null;
  // The rollback's live status comes with its execution's events.
  const live = row.rollback ? ctx?.executions[row.rollback.executionId]?.status : undefined;
  type RollbackStatus = NonNullable<SnapshotView["rollback"]>["status"];
  const s: SnapshotView = row.rollback && live ? { ...row, rollback: { ...row.rollback, status: live as RollbackStatus } } : row;
  const onApproval = ctx?.onApproval;
  const net = s.state === "taken" || s.state === "rolled_back";
  return (
    <div
      class={`card snapshot st-${s.state}`}
      data-snapshot={s.id}
      role="status"
      style={`border-left: 4px solid ${net ? "#2f855a" : s.state === "removed" ? "#999" : "#c05621"}; padding: 0.5rem 0.75rem; display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center;`}
    >
      <span class="safety-net">{headline(s)}</span>
      {s.state === "failed" && s.reason && <span class="desc">{s.reason}</span>}
      {s.guestWasRunning === true && net && <span class="desc">(it was running; a rollback starts it again)</span>}
      <span style="flex: 1" />
      <RollbackButton s={s} {...(onApproval ? { onApproval } : {})} />
    </div>
  );
}

/** Under a plan card: the snapshots that plan took (or could not take). */
export function PlanSafetyNet({ planId, snapshots, ctx }: { planId: string; snapshots: Record<string, SnapshotView>; ctx?: CardContext }) {
  const mine = Object.values(snapshots).filter((s) => s.planId === planId);
  if (mine.length === 0) return null;
  // A failed attempt that a later one replaced says nothing more.
  const shown = mine.filter(
    (s) => s.state !== "failed" || !mine.some((o) => o.vmid === s.vmid && o.node === s.node && o.state !== "failed"),
  );
  return (
    <div class="plan-safety-net" data-plan-safety-net={planId}>
      {shown.map((s) => (
        <SnapshotCard s={s} {...(ctx ? { ctx } : {})} />
      ))}
    </div>
  );
}

/** In the pinned checklist: one line per guest the plan touched, saying whether it has a safety net. */
export function ChecklistSafetyNet({ planId, snapshots }: { planId: string; snapshots: Record<string, SnapshotView> }) {
  const mine = Object.values(snapshots).filter((s) => s.planId === planId);
  // Per guest, the latest word: a failed attempt that a later one replaced says nothing more.
  const latest = new Map<string, SnapshotView>();
  for (const s of mine) {
    const key = `${s.node}/${s.vmid}`;
    const seen = latest.get(key);
    if (!seen || s.takenAt >= seen.takenAt) latest.set(key, s);
  }
  if (latest.size === 0) return null;
  return (
    <ul class="checklist-nets" aria-label="Safety nets">
      {[...latest.values()].map((s) => (
        <li class={`cl-net st-${s.state}`} data-checklist-net={s.id}>
          {headline(s)}
        </li>
      ))}
    </ul>
  );
}

/** #/snapshots: per guest, Nomos's snapshots with their plan and a link to the session. */
export function SnapshotsPage() {
  const [list, setList] = useState<SnapshotView[] | undefined>();
  const [error, setError] = useState("");
  const load = () =>
    api<{ snapshots: SnapshotView[] }>("GET", "/api/snapshots")
      .then((r) => setList(r.snapshots))
      .catch((err: Error) => setError(err.message));
  useEffect(() => {
    void load();
  }, []);
  const guests = new Map<string, SnapshotView[]>();
  for (const s of list ?? []) {
    const key = `${s.node}/${s.vmid}`;
    guests.set(key, [...(guests.get(key) ?? []), s]);
  }
  return (
    <div class="chat snapshots-view">
      <header class="chat-head">
        <h1 class="title">Snapshots</h1>
      </header>
      <div class="scroll">
        <p class="desc">
          Nomos snapshots an existing guest before an approved plan first changes it, and removes its own snapshots once the plan is
          verified and old enough (NOMOS_SNAPSHOT_KEEP_DAYS), keeping at most NOMOS_SNAPSHOT_KEEP_PER_GUEST per guest. Snapshots anyone else
          took are never touched.
        </p>
        {/* The heading stands from the first paint; loading and errors show under it. */}
        {error ? (
          <p class="form-error" role="alert">
            {error}
          </p>
        ) : !list ? (
          <p class="boot">Loading snapshots…</p>
        ) : (
          guests.size === 0 && <div class="empty">No snapshots yet.</div>
        )}
        {[...guests.entries()].map(([key, snaps]) => (
          <section class="card" data-guest={key}>
            <header>
              <span class="card-kind">Guest</span>
              <span class="target">{snaps[0]!.target}</span>
              <span class="desc">
                {key} · {snaps[0]!.kind}
              </span>
            </header>
            <ul class="snapshot-list" style="list-style: none; padding: 0; margin: 0;">
              {snaps.map((s) => (
                <li data-snapshot-row={s.id} style="padding: 0.25rem 0;">
                  <code>{s.name}</code> · {s.state.replace("_", " ")} · {when(s.takenAt)} · plan:{" "}
                  <a href={`#/s/${s.sessionId}`}>{s.planGoal ?? s.planId.slice(0, 8)}</a>
                  {s.planOutcome ? ` (${s.planOutcome})` : ""}
                  {s.reason ? ` — ${s.reason}` : ""} <RollbackButton s={s} />
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
    </div>
  );
}
