// The page's state for snapshots (web/client/timeline.ts, pure): a
// snapshot_recorded event puts one card in the turn that took it, before the
// step it was taken for, and later events for the same snapshot update that
// card in place (a replayed stream rebuilds the same view).
import { expect, it } from "vitest";
import type { SnapshotView } from "../src/events/contract.js";
import { type ApiEvent, applyEvent, emptyTimeline } from "../src/web/client/timeline.js";

const snapshot = (state: SnapshotView["state"]): SnapshotView => ({
  id: "s1",
  sessionId: "sess",
  planId: "p1",
  planGoal: "change web1",
  planOutcome: null,
  target: "web1",
  node: "pve1",
  vmid: 105,
  kind: "lxc",
  name: "nomos-abc",
  state,
  reason: null,
  guestWasRunning: true,
  sizeBytes: null,
  executionId: "x1",
  rollback: null,
  takenAt: "2026-11-30T09:00:00.000Z",
  rolledBackAt: null,
  removedAt: null,
});

let id = 0;
const ev = (type: ApiEvent["type"], data: Record<string, unknown>, turnId: string | null = "t1"): ApiEvent => ({
  id: String(++id),
  type,
  turnId,
  createdAt: `2026-11-30T09:00:0${id}.000Z`,
  data,
});

it("places the snapshot card before the step it was taken for, once, and updates it in place", () => {
  const events = [
    ev("turn_started", { turnId: "t1", kind: "operator" }),
    ev("tool_use", { id: "u1", name: "run", input: { target: "web1", command: "echo hi > /etc/motd" } }),
    ev("snapshot_recorded", { snapshot: snapshot("taken") }),
    ev("tool_result", { toolUseId: "u1", isError: false, content: "ok" }),
    ev("snapshot_recorded", { snapshot: snapshot("removed") }, null),
  ];
  const t = events.reduce(applyEvent, emptyTimeline());
  expect(t.turns).toHaveLength(1);
  expect(t.turns[0]!.parts.map((p) => p.type)).toEqual(["snapshot", "tool"]);
  expect(t.snapshots.s1?.state).toBe("removed");
  // Replaying the same events changes nothing.
  expect(events.reduce(applyEvent, t)).toBe(t);
});
