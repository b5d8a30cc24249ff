-- 130_message_counts: how many transcript rows each session has, kept in
-- the same transaction as the rows (issue 20, round 3).
--
-- Why: the history cache (src/turns/history-cache.ts) reads only the rows
-- after the last one it has (`through`). A row can commit after a higher id
-- was read (two writers of one session: an id is taken at INSERT, visible
-- at COMMIT), and would then sit below `through` unseen. The cache used to
-- prove there was none by counting the session's rows at or below `through`
-- on every read: an index-only scan, O(history) (~3 ms at 10,000 rows).
-- With this counter the read takes `n` in the same statement (one snapshot)
-- as the new rows: n = cached + new proves nothing committed below it.
--
-- Invariant: for every session, message_counts.n equals the number of its
-- rows in `messages`, in every snapshot — the counter moves in the writing
-- transaction, by a statement-level trigger over the statement's transition
-- table (one upsert per statement and session, however many rows). A
-- session with no row may have no counter row (read as 0)
-- (tests/message-counts.test.ts).
--
-- What it costs writers: the upsert locks the session's counter row until
-- commit, so two transactions appending to ONE session's transcript commit
-- one after the other (they did not wait before). Every writer appends last
-- in its transaction or statement (turns.ts, session-stop.ts, messages.ts,
-- continuation/ledger.ts and continuation-queue.ts), so the wait is short
-- and takes no other lock after it. Sessions never wait for each other.
--
-- A row's session never changes (nothing updates messages.session_id; the
-- trigger below refuses it, since a moved row would escape both counts).
-- A counter that is off the other way (a TRUNCATE, rows written with
-- triggers disabled) only makes the cache read the whole transcript again
-- on every turn: slower, never wrong.
--
-- Not a domain table: a derived count of `messages`, whose rows are audited
-- (002); it gets no audit trigger of its own (one more audit row per
-- message would record nothing new).

CREATE TABLE message_counts (
  session_id uuid PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  n          bigint NOT NULL CHECK (n >= 0)
);

-- No writer may slip between the backfill and the triggers: inserts wait
-- for this migration's commit (reads go on). The mode CREATE TRIGGER takes
-- anyway, taken first, so the lock is never upgraded while writers queue.
LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO message_counts (session_id, n)
SELECT session_id, count(*) FROM messages GROUP BY session_id;

-- Rows added: one upsert per session the statement wrote to, in session
-- order (two statements writing the same sessions lock them in one order).
CREATE FUNCTION message_counts_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_counts AS c (session_id, n)
  SELECT session_id, count(*) FROM added GROUP BY session_id ORDER BY session_id
  ON CONFLICT (session_id) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END;
$$;

-- Rows removed (a session deleted: its counter row goes by its own cascade,
-- and whichever runs second finds nothing to do).
CREATE FUNCTION message_counts_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE message_counts c SET n = c.n - r.n
    FROM (SELECT session_id, count(*) AS n FROM removed GROUP BY session_id ORDER BY session_id) r
   WHERE c.session_id = r.session_id;
  RETURN NULL;
END;
$$;

CREATE FUNCTION messages_session_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'messages.session_id never changes (message %): message_counts would be wrong', OLD.id
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER messages_count_added AFTER INSERT ON messages
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION message_counts_added();
CREATE TRIGGER messages_count_removed AFTER DELETE ON messages
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION message_counts_removed();
-- UPDATE OF session_id: statements that set only turn_id (coalescing) never fire it.
CREATE TRIGGER messages_session_fixed BEFORE UPDATE OF session_id ON messages
  FOR EACH ROW WHEN (OLD.session_id IS DISTINCT FROM NEW.session_id) EXECUTE FUNCTION messages_session_fixed();

-- The service role gets the new table like the others (030); absent role: the service runs as the owner.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_service') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON message_counts TO nomos_service;
  END IF;
END;
$$;
