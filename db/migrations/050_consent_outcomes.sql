-- 050_consent_outcomes: consent that means what the operator said (issue 13).
--
-- 1. A plan records how it ended. The agent's report_outcome tool sets
--    outcome ('verified' | 'blocked'), its summary and, when blocked, what
--    the agent needs; finished_at marks the plan done. "An approved plan that
--    is not finished" (what forward words like "continue" resume) is
--    status = 'approved' AND finished_at IS NULL. A plan is finished once:
--    the tool's UPDATE is conditional on finished_at IS NULL.
ALTER TABLE plans
  ADD COLUMN outcome         text CHECK (outcome IN ('verified', 'blocked')),
  ADD COLUMN outcome_summary text CHECK (length(outcome_summary) <= 4000),
  ADD COLUMN outcome_needs   text CHECK (length(outcome_needs) <= 4000),
  ADD COLUMN finished_at     timestamptz,
  ADD CONSTRAINT plans_finished_has_outcome CHECK ((finished_at IS NULL) = (outcome IS NULL));

-- 2. Why a window closed, with the new reasons: the operator rejected the
--    plan that opened it ('rejected'), or the agent reported the plan's
--    outcome ('plan_verified', 'plan_blocked'). The column CHECK of 002 is
--    replaced (its name is PostgreSQL's default for a column constraint).
ALTER TABLE assent_windows DROP CONSTRAINT assent_windows_close_reason_check;
ALTER TABLE assent_windows ADD CONSTRAINT assent_windows_close_reason_check
  CHECK (close_reason IN ('expired', 'revoked', 'continuation_limit', 'rejected', 'plan_verified', 'plan_blocked'));

-- Forward words look up the session's latest approved, unfinished plan.
CREATE INDEX plans_session_unfinished_idx ON plans (session_id, decided_at) WHERE status = 'approved' AND finished_at IS NULL;
