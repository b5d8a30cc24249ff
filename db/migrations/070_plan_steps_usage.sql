-- 070_plan_steps_usage: approve and walk away (issue 16).
--
-- 1. A plan is a live checklist. Each step of a plan (plans.steps, the
--    jsonb array propose_plan recorded) gets a row here with its status:
--
--      pending --> running --> done | failed | skipped
--         \__________________/^        |
--                                      +--> running (a failed step retried)
--
--    done and skipped are final. The agent sets them (update_plan), and run
--    / request_execution naming a step mark it running when it is pending.
--    The only writer is src/plans/plan-steps.ts, one conditional UPDATE per
--    change. position is 1-based, as the agent and the page count.
CREATE TABLE plan_steps (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  plan_id     uuid        NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
  -- Copied from the plan so the audit trail and the timeline filter by session.
  session_id  uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  position    integer     NOT NULL CHECK (position >= 1),
  status      text        NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'running', 'done', 'failed', 'skipped')),
  note        text        CHECK (length(note) <= 2000),
  started_at  timestamptz,
  finished_at timestamptz,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (plan_id, position)
);
SELECT audit.attach('plan_steps', 'id');

-- Plans proposed before this migration get their checklist, every step pending.
INSERT INTO plan_steps (plan_id, session_id, position)
SELECT p.id, p.session_id, s.ord
  FROM plans p, jsonb_array_elements(p.steps) WITH ORDINALITY AS s(step, ord);

-- 2. The step an execution served (run / request_execution `step`), for the
--    export and the checklist. Null: no step named.
ALTER TABLE executions ADD COLUMN plan_step integer CHECK (plan_step >= 1);

-- 3. Usage and cost: one row per model call, as the Messages API reported
--    it. plan_id is the plan the session's assent window was opened for at
--    the time of the call (null outside a window): "the plan's tokens".
--    Rows are only inserted, never changed.
CREATE TABLE model_calls (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id         uuid        NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  turn_id            uuid        REFERENCES turns (id) ON DELETE SET NULL,
  plan_id            uuid        REFERENCES plans (id) ON DELETE SET NULL,
  model              text        NOT NULL,
  input_tokens       integer     NOT NULL CHECK (input_tokens >= 0),
  output_tokens      integer     NOT NULL CHECK (output_tokens >= 0),
  cache_read_tokens  integer     NOT NULL DEFAULT 0 CHECK (cache_read_tokens >= 0),
  cache_write_tokens integer     NOT NULL DEFAULT 0 CHECK (cache_write_tokens >= 0),
  cost_usd           double precision CHECK (cost_usd >= 0),
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
SELECT audit.attach('model_calls', 'id');
-- The session's sum, the plan's sum, and "since the window opened" (the budget).
CREATE INDEX model_calls_session_idx ON model_calls (session_id, created_at);
CREATE INDEX model_calls_plan_idx ON model_calls (plan_id) WHERE plan_id IS NOT NULL;

-- 4. A window closes with reason 'budget' when the tokens spent since it
--    opened exceed NOMOS_WINDOW_TOKEN_BUDGET (src/usage/window-budget.ts).
ALTER TABLE assent_windows DROP CONSTRAINT assent_windows_close_reason_check;
ALTER TABLE assent_windows ADD CONSTRAINT assent_windows_close_reason_check
  CHECK (close_reason IN ('expired', 'revoked', 'continuation_limit', 'rejected', 'plan_verified', 'plan_blocked', 'budget'));

-- The service role gets the new tables like the others (030); absent role: the service runs as the owner.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_service') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON plan_steps, model_calls TO nomos_service;
    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO nomos_service;
  END IF;
END;
$$;
