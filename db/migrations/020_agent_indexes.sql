-- 020_agent_indexes: the agent's access paths (issue 4).
--
-- messages_turn_idx: a claimed turn re-points the messages of the queued
-- turns it coalesced (UPDATE messages SET turn_id = $running WHERE turn_id
-- IN (...)), and deleting a turn sets its messages' turn_id to NULL; both
-- would otherwise scan every message of every session.
--
-- approvals_session_decided_idx: what the agent is told after the operator
-- decides by button (approvalsSettledNotes) reads a session's decisions
-- newer than its latest turn.
CREATE INDEX messages_turn_idx ON messages (turn_id) WHERE turn_id IS NOT NULL;
CREATE INDEX approvals_session_decided_idx ON approvals (session_id, decided_at) WHERE status <> 'pending';
