-- For npm run bench:claim-path -- --ab [--explain]: a candidate measured in round 4 and not kept
-- (docs/benchmarks.md): audit.record rewritten, each jsonb built only in its branch.
CREATE OR REPLACE FUNCTION audit.record() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  old_j   jsonb;
  new_j   jsonb;
  row_j   jsonb;
  changed text[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    new_j := to_jsonb(NEW);
    row_j := new_j;
  ELSIF TG_OP = 'DELETE' THEN
    old_j := to_jsonb(OLD);
    row_j := old_j;
  ELSE
    old_j := to_jsonb(OLD);
    new_j := to_jsonb(NEW);
    row_j := new_j;
    SELECT array_agg(n.key ORDER BY n.key) INTO changed
      FROM jsonb_each(new_j) n
     WHERE n.value IS DISTINCT FROM old_j -> n.key;
    IF changed IS NULL THEN
      RETURN NULL; -- an UPDATE that changed nothing is not an event
    END IF;
  END IF;

  IF TG_NARGS > 1 THEN
    old_j := old_j - TG_ARGV[1:TG_NARGS - 1];
    new_j := new_j - TG_ARGV[1:TG_NARGS - 1];
  END IF;

  INSERT INTO audit.events (actor, table_name, operation, row_key, session_id, old_row, new_row, changed_columns)
  VALUES (
    coalesce(nullif(current_setting('nomos.actor', true), ''), 'db:' || current_user),
    TG_TABLE_NAME,
    TG_OP,
    row_j ->> TG_ARGV[0],
    CASE WHEN TG_TABLE_NAME = 'sessions' THEN (row_j ->> 'id')::uuid
         ELSE (row_j ->> 'session_id')::uuid END,
    old_j,
    new_j,
    changed
  );
  RETURN NULL;
END;
$$;
