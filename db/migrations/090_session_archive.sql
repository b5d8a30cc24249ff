-- 090_session_archive: deleting a session from the page is a soft delete
-- (issue 18). The operator's "Delete" sets archived_at; the session then
-- leaves the list and its routes answer 404, but its row, transcript,
-- approvals and executions stay, and the audit trigger already attached to
-- `sessions` (002) records the UPDATE with its actor, so the trail of what
-- was done on the homelab is never lost with the chat.
-- Archiving happens once: sessions/session-archive.ts's UPDATE is
-- conditional on archived_at IS NULL. The service role's grants on the
-- table (030) cover the new column.
ALTER TABLE sessions ADD COLUMN archived_at timestamptz;

-- The list reads the live sessions, newest first.
CREATE INDEX sessions_live_created_idx ON sessions (created_at DESC, id DESC) WHERE archived_at IS NULL;
