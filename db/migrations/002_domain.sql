-- 002_domain: the data model of DESIGN.md.
--
--   operators ─┐
--   targets    │ (from NOMOS_TARGETS_FILE, plus containers created by pct_create)
--   sessions ──┼─< messages        (operator | assistant | tool_results | system_note)
--              ├─< turns           (operator | continuation; at most one running)
--              ├─< plans ─< approvals >─ executions
--              ├─< assent_windows  (at most one not closed)
--              ├─< executions ─── nomos_plan_executions (the continuation ledger)
--              └─< session_events  (the SSE stream, resumable by id)
--
-- Every status column has a CHECK listing its states; the transitions that
-- matter for safety (executions, approvals) are enforced by triggers below,
-- so a bug in the service cannot, say, resurrect a finished execution.
-- Every domain table gets the audit trigger from 001_audit.

-- ─── operators ─────────────────────────────────────────────────────────────

CREATE TABLE operators (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  username      text NOT NULL UNIQUE CHECK (username ~ '^[A-Za-z0-9._@-]{1,64}$'),
  -- scrypt$N$r$p$salt$hash (node:crypto); never copied into the audit trail.
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
SELECT audit.attach('operators', 'id', 'password_hash');

-- A browser login: the cookie carries a random token, the table its sha256.
CREATE TABLE operator_logins (
  token_sha256 text PRIMARY KEY,
  operator_id  uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX operator_logins_operator_idx ON operator_logins (operator_id);
SELECT audit.attach('operator_logins', 'operator_id', 'token_sha256');

-- ─── targets ───────────────────────────────────────────────────────────────

-- A host the agent may act on. 'proxmox' and 'ssh' targets come from the
-- targets file and are reached directly, with a pinned host key; 'container'
-- targets are created by pct_create and reached through their node with
-- `pct exec <vmid>`, so they carry node + vmid instead of an address.
-- privateKeyPath is a path, never key material: keys stay on disk.
CREATE TABLE targets (
  name             text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
  kind             text NOT NULL CHECK (kind IN ('proxmox', 'ssh', 'container')),
  host             text,
  port             integer CHECK (port BETWEEN 1 AND 65535),
  username         text,
  private_key_path text,
  host_key_sha256  text CHECK (host_key_sha256 ~ '^SHA256:[A-Za-z0-9+/]{43}=?$'),
  node             text REFERENCES targets (name),
  vmid             integer CHECK (vmid BETWEEN 100 AND 999999999),
  -- The session whose plan created the container: the assent window's scope
  -- includes containers created under it.
  created_by_session_id uuid,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT targets_direct_has_address CHECK (
    kind = 'container' OR (host IS NOT NULL AND port IS NOT NULL AND username IS NOT NULL
                           AND private_key_path IS NOT NULL AND host_key_sha256 IS NOT NULL)),
  CONSTRAINT targets_container_has_node CHECK (
    (kind = 'container') = (node IS NOT NULL AND vmid IS NOT NULL))
);
-- `<node>/<vmid>` addresses a container as well as its name does.
CREATE UNIQUE INDEX targets_node_vmid_key ON targets (node, vmid) WHERE kind = 'container';
SELECT audit.attach('targets', 'name');

-- ─── sessions and their transcript ─────────────────────────────────────────

CREATE TABLE sessions (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title       text NOT NULL DEFAULT 'New session' CHECK (length(title) BETWEEN 1 AND 200),
  operator_id uuid REFERENCES operators (id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
SELECT audit.attach('sessions', 'id');

ALTER TABLE targets
  ADD CONSTRAINT targets_created_by_session_fk
  FOREIGN KEY (created_by_session_id) REFERENCES sessions (id) ON DELETE SET NULL;

-- A turn is one run of the agent loop. At most one runs per session: the
-- unique partial index below is the lock, so two replicas cannot both start
-- one. Work that arrives meanwhile waits ('queued') and is coalesced.
--
--   queued -> running -> completed | failed | aborted | interrupted
--   queued -> cancelled (coalesced into another turn)
CREATE TABLE turns (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('operator', 'continuation')),
  status      text NOT NULL DEFAULT 'queued'
              CHECK (status IN ('queued', 'running', 'completed', 'failed', 'aborted', 'interrupted', 'cancelled')),
  -- What started it: the operator's text, or the notes of a continuation.
  input       jsonb NOT NULL DEFAULT '{}'::jsonb,
  iterations  integer NOT NULL DEFAULT 0 CHECK (iterations >= 0),
  error       text,
  -- The process running it, and until when it is presumed alive.
  owner       text,
  lease_expires_at timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  started_at  timestamptz,
  finished_at timestamptz,
  CONSTRAINT turns_running_has_start CHECK (status NOT IN ('running') OR started_at IS NOT NULL),
  CONSTRAINT turns_finished_has_end CHECK (
    status IN ('queued', 'running') OR finished_at IS NOT NULL)
);
CREATE UNIQUE INDEX turns_one_running_per_session ON turns (session_id) WHERE status = 'running';
CREATE INDEX turns_session_idx ON turns (session_id, created_at);
CREATE INDEX turns_queued_idx ON turns (created_at) WHERE status = 'queued';
SELECT audit.attach('turns', 'id');

-- The transcript, in order. content is the exact Anthropic content-block
-- array for assistant and tool_results rows (so tool_use ids pair with their
-- tool_result on every replay), and [{type:'text', text}] for operator words
-- and system notes. system_note rows are replayed to the model marked as
-- coming from the system, never as operator words.
CREATE TABLE messages (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  turn_id    uuid REFERENCES turns (id) ON DELETE SET NULL,
  kind       text NOT NULL CHECK (kind IN ('operator', 'assistant', 'tool_results', 'system_note')),
  content    jsonb NOT NULL CHECK (jsonb_typeof(content) = 'array'),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_session_idx ON messages (session_id, id);
SELECT audit.attach('messages', 'id');

-- ─── plans, approvals, the assent window ───────────────────────────────────

CREATE TABLE plans (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id  uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  goal        text NOT NULL CHECK (length(goal) BETWEEN 1 AND 2000),
  -- [{title, target?, command?, destructive?}], as proposed.
  steps       jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array'),
  status      text NOT NULL DEFAULT 'pending_approval'
              CHECK (status IN ('pending_approval', 'approved', 'rejected', 'expired', 'superseded')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  decided_at  timestamptz
);
CREATE INDEX plans_session_idx ON plans (session_id, created_at);
SELECT audit.attach('plans', 'id');

-- ─── executions ────────────────────────────────────────────────────────────

--   pending_approval -> approved -> running -> completed | failed | timed_out | cancelled
--   pending_approval -> rejected
--   pending_approval | approved -> cancelled      (withdrawn before it ran)
--   approved -> failed                            (could not start: host key, unreachable)
-- Terminal states (completed, failed, timed_out, cancelled, rejected) never
-- change again; executions_guard_transition refuses it.
CREATE TABLE executions (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id    uuid REFERENCES sessions (id) ON DELETE CASCADE,
  plan_id       uuid REFERENCES plans (id) ON DELETE SET NULL,
  turn_id       uuid REFERENCES turns (id) ON DELETE SET NULL,
  target        text NOT NULL,
  command       text NOT NULL CHECK (length(command) BETWEEN 1 AND 100000),
  description   text,
  -- 'sync' for the run tool (result returned inline), 'async' for
  -- request_execution (result delivered by a continuation).
  mode          text NOT NULL DEFAULT 'async' CHECK (mode IN ('sync', 'async')),
  risk          text NOT NULL CHECK (risk IN ('read_only', 'config_mutation', 'destructive')),
  status        text NOT NULL DEFAULT 'pending_approval'
                CHECK (status IN ('pending_approval', 'approved', 'running', 'completed',
                                  'failed', 'timed_out', 'cancelled', 'rejected')),
  timeout_s     integer NOT NULL DEFAULT 600 CHECK (timeout_s BETWEEN 1 AND 86400),
  exit_code     integer,
  signal        text,
  -- Captured output, already capped (head + tail) and redacted.
  stdout        text NOT NULL DEFAULT '',
  stderr        text NOT NULL DEFAULT '',
  stdout_dropped_bytes bigint NOT NULL DEFAULT 0,
  stderr_dropped_bytes bigint NOT NULL DEFAULT 0,
  -- Why it failed when the command itself did not say: unreachable host,
  -- host key mismatch, lease lost ("may or may not have completed").
  error         text,
  -- The runner holding it while running, and until when.
  runner_owner  text,
  lease_expires_at timestamptz,
  cancel_requested_at timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  approved_at   timestamptz,
  started_at    timestamptz,
  finished_at   timestamptz,
  CONSTRAINT executions_running_has_lease CHECK (
    status <> 'running' OR (started_at IS NOT NULL AND runner_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CONSTRAINT executions_terminal_has_end CHECK (
    status IN ('pending_approval', 'approved', 'running') OR finished_at IS NOT NULL)
);
CREATE INDEX executions_session_idx ON executions (session_id, created_at);
-- The runner's queue and its lease sweep.
CREATE INDEX executions_approved_idx ON executions (approved_at) WHERE status = 'approved';
CREATE INDEX executions_running_lease_idx ON executions (lease_expires_at) WHERE status = 'running';
SELECT audit.attach('executions', 'id');

CREATE FUNCTION execution_is_terminal(status text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN status IN ('completed', 'failed', 'timed_out', 'cancelled', 'rejected');

-- The database's copy of the lifecycle: any transition not drawn above is
-- refused, and a terminal row is frozen whole (its result is its record).
CREATE FUNCTION executions_guard_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF execution_is_terminal(OLD.status) THEN
    RAISE EXCEPTION 'execution % is % and terminal states never change', OLD.id, OLD.status
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.status IS DISTINCT FROM OLD.status AND NOT (
       (OLD.status = 'pending_approval' AND NEW.status IN ('approved', 'rejected', 'cancelled'))
    OR (OLD.status = 'approved'         AND NEW.status IN ('running', 'cancelled', 'failed'))
    OR (OLD.status = 'running'          AND NEW.status IN ('completed', 'failed', 'timed_out', 'cancelled'))
  ) THEN
    RAISE EXCEPTION 'execution %: % -> % is not a legal transition', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER executions_guard_transition
  BEFORE UPDATE ON executions
  FOR EACH ROW EXECUTE FUNCTION executions_guard_transition();

-- The event loop's first link: exactly when a status moves from a
-- non-terminal to a terminal state, tell every listening replica. NOTIFY is
-- transactional: it is delivered on commit, never for a rolled-back update.
CREATE FUNCTION executions_notify_finished() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('nomos_execution_finished', NEW.id::text);
  RETURN NULL;
END;
$$;
CREATE TRIGGER executions_notify_finished
  AFTER UPDATE OF status ON executions
  FOR EACH ROW
  WHEN (NOT execution_is_terminal(OLD.status) AND execution_is_terminal(NEW.status))
  EXECUTE FUNCTION executions_notify_finished();

-- The runner's wake-up: an execution became ready to run (inserted already
-- approved, or approved later). A slow sweep in the runner is the backstop.
CREATE FUNCTION executions_notify_ready() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('nomos_execution_ready', NEW.id::text);
  RETURN NULL;
END;
$$;
CREATE TRIGGER executions_notify_ready_insert
  AFTER INSERT ON executions
  FOR EACH ROW WHEN (NEW.status = 'approved')
  EXECUTE FUNCTION executions_notify_ready();
CREATE TRIGGER executions_notify_ready_update
  AFTER UPDATE OF status ON executions
  FOR EACH ROW WHEN (OLD.status <> 'approved' AND NEW.status = 'approved')
  EXECUTE FUNCTION executions_notify_ready();

-- A pending decision on a plan or on one gated execution.
--   pending -> approved | rejected | expired        (decided once, then frozen)
-- confirmation_phrase is set for destructive steps: approving needs the
-- operator to type it.
CREATE TABLE approvals (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id    uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('plan', 'execution')),
  plan_id       uuid REFERENCES plans (id) ON DELETE CASCADE,
  execution_id  uuid REFERENCES executions (id) ON DELETE CASCADE,
  status        text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
  confirmation_phrase text,
  decided_by    text,
  decided_via   text CHECK (decided_via IN ('button', 'chat', 'expiry')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  decided_at    timestamptz,
  CONSTRAINT approvals_subject CHECK (
    (kind = 'plan' AND plan_id IS NOT NULL AND execution_id IS NULL) OR
    (kind = 'execution' AND execution_id IS NOT NULL)),
  CONSTRAINT approvals_decided_has_time CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE UNIQUE INDEX approvals_one_per_plan ON approvals (plan_id) WHERE kind = 'plan';
CREATE UNIQUE INDEX approvals_one_per_execution ON approvals (execution_id) WHERE kind = 'execution';
CREATE INDEX approvals_session_pending_idx ON approvals (session_id, created_at) WHERE status = 'pending';
CREATE INDEX approvals_expiry_idx ON approvals (expires_at) WHERE status = 'pending';
SELECT audit.attach('approvals', 'id');

CREATE FUNCTION approvals_guard_decision() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status <> 'pending' THEN
    RAISE EXCEPTION 'approval % was already %; a decision is made once', OLD.id, OLD.status
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER approvals_guard_decision
  BEFORE UPDATE ON approvals
  FOR EACH ROW EXECUTE FUNCTION approvals_guard_decision();

-- Time-boxed autonomy for one session. Open means: closed_at IS NULL and
-- expires_at > now(). At most one row per session is not closed (the unique
-- index); an expired row is closed before a new window opens. scope_targets
-- lists the targets the approved plan names; containers created under the
-- window join it.
CREATE TABLE assent_windows (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  session_id    uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  plan_id       uuid REFERENCES plans (id) ON DELETE SET NULL,
  scope_targets text[] NOT NULL DEFAULT '{}',
  -- Destructive steps the approved plan pre-authorized: [{target, command}].
  preauthorized jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(preauthorized) = 'array'),
  opened_by     text NOT NULL,
  opened_at     timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  -- The loop guard: continuation turns started under this window.
  continuations integer NOT NULL DEFAULT 0 CHECK (continuations >= 0),
  closed_at     timestamptz,
  close_reason  text CHECK (close_reason IN ('expired', 'revoked', 'continuation_limit')),
  CONSTRAINT assent_windows_closed_has_reason CHECK ((closed_at IS NULL) = (close_reason IS NULL)),
  CONSTRAINT assent_windows_expiry_after_open CHECK (expires_at > opened_at)
);
CREATE UNIQUE INDEX assent_windows_one_unclosed ON assent_windows (session_id) WHERE closed_at IS NULL;
SELECT audit.attach('assent_windows', 'id');

-- ─── the continuation ledger ───────────────────────────────────────────────

-- One row per execution created on behalf of a session, written in the same
-- transaction as the execution. continued_at is the exactly-once claim:
--   UPDATE nomos_plan_executions SET continued_at = now(), claimed_by = $owner,
--          claim_expires_at = now() + lease
--    WHERE execution_id = $1 AND continued_at IS NULL RETURNING ...
-- delivered_turn_id is set when the continuation turn that carries the
-- result starts; a claim whose lease lapsed with no delivered turn (the
-- claimant crashed) may be re-dispatched once by another process.
CREATE TABLE nomos_plan_executions (
  execution_id      uuid PRIMARY KEY REFERENCES executions (id) ON DELETE CASCADE,
  session_id        uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  plan_id           uuid REFERENCES plans (id) ON DELETE SET NULL,
  continued_at      timestamptz,
  claimed_by        text,
  claim_expires_at  timestamptz,
  delivered_turn_id uuid REFERENCES turns (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT npe_claim_complete CHECK ((continued_at IS NULL) = (claimed_by IS NULL))
);
-- The sweep's way in: only rows not yet continued are indexed, so the sweep
-- stays flat however much history accumulates.
CREATE INDEX nomos_plan_executions_pending_idx
  ON nomos_plan_executions (created_at) WHERE continued_at IS NULL;
CREATE INDEX nomos_plan_executions_session_idx ON nomos_plan_executions (session_id);
-- Claims whose continuation turn has not started yet (crash recovery).
CREATE INDEX nomos_plan_executions_undelivered_idx
  ON nomos_plan_executions (claim_expires_at)
  WHERE continued_at IS NOT NULL AND delivered_turn_id IS NULL;
SELECT audit.attach('nomos_plan_executions', 'execution_id');

-- ─── the event stream ──────────────────────────────────────────────────────

-- Every event a browser sees on /api/sessions/:id/events, stored so that
-- Last-Event-ID resumes with no gap and no duplicate across refreshes and
-- replicas. Not audited: it is itself an append-only log, and audit rows
-- for every text delta would drown the trail.
CREATE TABLE session_events (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  turn_id    uuid REFERENCES turns (id) ON DELETE SET NULL,
  type       text NOT NULL CHECK (type ~ '^[a-z_]{1,40}$'),
  data       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_events_session_idx ON session_events (session_id, id);
