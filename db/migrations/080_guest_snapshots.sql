-- 080_guest_snapshots: the safety net under autonomy (issue 17).
--
-- Before the first change an approved plan makes to an existing guest (an
-- LXC container reached through its node, or a QEMU VM), Nomos takes a
-- Proxmox snapshot named nomos-<plan> and records it here, against the plan
-- and its session. The rollback is offered as a destructive, confirmed
-- execution; the retention sweep removes Nomos's own snapshots (and only
-- those: name prefix AND a row here) once they are no longer needed.
--
--   taken --rollback completed--> rolled_back --retention--> removed
--   taken --retention--------------------------------------> removed
--   failed        (the snapshot command failed; the next step tries again)
--   unsupported   (the guest's storage cannot snapshot; the step asked the
--                  operator, waiver_execution_id names that step)
--
-- src/snapshots/snapshot-store.ts is the only module that writes this table;
-- each state change there is one conditional UPDATE.

SELECT set_config('nomos.actor', 'system:migration-080', true);

CREATE TABLE guest_snapshots (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id    uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  plan_id       uuid NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
  -- The guest as the agent named it (a container target, or <node>/<vmid>).
  target        text NOT NULL,
  node          text NOT NULL,
  vmid          integer NOT NULL CHECK (vmid >= 100),
  kind          text NOT NULL CHECK (kind IN ('lxc', 'qemu')),
  -- Proxmox's rule for a snapshot name: a letter, then letters, digits, '-'
  -- or '_', at most 40 characters. Nomos's own always start with 'nomos-'.
  name          text NOT NULL CHECK (name ~ '^nomos-[A-Za-z0-9_-]{1,34}$'),
  state         text NOT NULL
                CHECK (state IN ('taken', 'failed', 'unsupported', 'rolled_back', 'removed')),
  -- Why it failed or could not be taken, in Proxmox's words.
  reason        text CHECK (length(reason) <= 2000),
  -- Whether the guest was running when the snapshot was taken (the rollback
  -- starts it again when it was).
  guest_was_running boolean,
  size_bytes    bigint CHECK (size_bytes >= 0),
  -- The executions that took it, rolled it back, removed it (observed steps).
  execution_id          uuid REFERENCES executions (id) ON DELETE SET NULL,
  rollback_execution_id uuid REFERENCES executions (id) ON DELETE SET NULL,
  -- For 'unsupported' (or 'failed'): the gated step the operator was asked
  -- to approve without a safety net. Approved, it waives the net for this
  -- guest in this plan.
  waiver_execution_id   uuid REFERENCES executions (id) ON DELETE SET NULL,
  taken_at      timestamptz NOT NULL DEFAULT now(),
  rolled_back_at timestamptz,
  removed_at    timestamptz,
  CONSTRAINT guest_snapshots_removed_has_time CHECK ((state = 'removed') = (removed_at IS NOT NULL)),
  CONSTRAINT guest_snapshots_failure_has_reason CHECK (state NOT IN ('failed', 'unsupported') OR reason IS NOT NULL)
);

-- At most one snapshot per guest per plan ('failed' attempts may repeat).
CREATE UNIQUE INDEX guest_snapshots_one_per_plan_guest ON guest_snapshots (plan_id, node, vmid) WHERE state <> 'failed';
-- The snapshots view and the per-guest retention cap.
CREATE INDEX guest_snapshots_guest_idx ON guest_snapshots (node, vmid, taken_at);
CREATE INDEX guest_snapshots_session_idx ON guest_snapshots (session_id, taken_at);
-- What the retention sweep looks at: snapshots still on the guest.
CREATE INDEX guest_snapshots_live_idx ON guest_snapshots (taken_at) WHERE state IN ('taken', 'rolled_back');

SELECT audit.attach('guest_snapshots', 'id');

-- The service's role gets the table through 030's default privileges when
-- this runs as the same owner; grant explicitly as well, for an owner whose
-- defaults were set otherwise.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_service') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON guest_snapshots TO nomos_service;
  END IF;
END;
$$;
