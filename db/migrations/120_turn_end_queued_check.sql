-- 120_turn_end_queued_check: the turn's last statement says whether the
-- session has work queued, so the process that ran it claims the queue only
-- when there is something to claim (issue 20, round 3: one statement fewer
-- per turn; turns/turn-store.ts turnEnd).
--
-- turns_queued_now(session) reads with a snapshot of its own, taken when it
-- is called, not the calling statement's: plpgsql, VOLATILE, in READ
-- COMMITTED each query in it sees every transaction committed before it
-- started. turnEnd calls it once per ended turn, after its UPDATE has left
-- 'running'. Why that matters: another process that queued work for the
-- session and failed to claim it (the ended turn was still running: the
-- unique index turns_one_running_per_session) committed its turn before
-- that UPDATE, so the check sees it, even when the statement's own
-- snapshot, taken before, does not. A claim that came after the UPDATE
-- waits on the unique index for the ending transaction and then succeeds.
-- Either way the queue is never left to the sweep.
CREATE FUNCTION turns_queued_now(p_session uuid) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM 1 FROM turns WHERE session_id = p_session AND status = 'queued' LIMIT 1;
  RETURN FOUND;
END;
$$;
