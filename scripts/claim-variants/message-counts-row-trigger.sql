-- For npm run bench:claim-path -- --ab [--explain]: a candidate measured in round 4 and not kept
-- (docs/benchmarks.md): message_counts kept by a row trigger instead of the statement trigger.
CREATE FUNCTION message_counts_added_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_counts AS c (session_id, n) VALUES (NEW.session_id, 1)
  ON CONFLICT (session_id) DO UPDATE SET n = c.n + 1;
  RETURN NULL;
END;
$$;
DROP TRIGGER messages_count_added ON messages;
CREATE TRIGGER messages_count_added AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION message_counts_added_row();
