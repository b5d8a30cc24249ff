-- 001_audit: the append-only audit trail every domain table writes to.
--
-- Why first: every later migration attaches audit.attach(...) to the tables it
-- creates, so the machinery must exist before them.
--
-- Who the actor is: the service sets it per transaction with
--   SELECT set_config('nomos.actor', 'operator:alice', true)
-- (is_local = true, so it dies with the transaction and can never leak to the
-- next transaction on a pooled connection). Writes made without it, e.g. by
-- a person in psql, are attributed to the database role.
--
-- Append-only: UPDATE, DELETE and TRUNCATE on audit.events are refused by
-- triggers, which also bind superusers (short of session_replication_role =
-- replica, which needs superuser and is itself logged by PostgreSQL).

CREATE SCHEMA audit;

CREATE TABLE audit.events (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  txid            bigint      NOT NULL DEFAULT txid_current(),
  actor           text        NOT NULL,
  table_name      text        NOT NULL,
  operation       text        NOT NULL CHECK (operation IN ('INSERT', 'UPDATE', 'DELETE')),
  row_key         text        NOT NULL,
  -- The session the row belongs to, when it belongs to one: lets
  -- audit.timeline be filtered by session without digging through jsonb.
  session_id      uuid,
  old_row         jsonb,
  new_row         jsonb,
  changed_columns text[]
);

CREATE INDEX audit_events_session_idx ON audit.events (session_id, id) WHERE session_id IS NOT NULL;
CREATE INDEX audit_events_table_key_idx ON audit.events (table_name, row_key, id);

COMMENT ON TABLE audit.events IS
  'Append-only: one row per INSERT/UPDATE/DELETE of a domain row. Never edited, never deleted.';

-- The row trigger. TG_ARGV[0] names the key column; any further arguments
-- name columns that must never be copied into the trail (password hashes,
-- token hashes): they are removed from old_row/new_row, and a change to them
-- shows only as the column name in changed_columns.
CREATE FUNCTION audit.record() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  old_j   jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
  new_j   jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
  row_j   jsonb := coalesce(new_j, old_j);
  key_col text  := TG_ARGV[0];
  hidden  text[] := CASE WHEN TG_NARGS > 1 THEN TG_ARGV[1:TG_NARGS - 1] ELSE '{}'::text[] END;
  changed text[];
  col     text;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    SELECT array_agg(n.key ORDER BY n.key) INTO changed
      FROM jsonb_each(new_j) n
     WHERE n.value IS DISTINCT FROM old_j -> n.key;
    IF changed IS NULL THEN
      RETURN NULL; -- an UPDATE that changed nothing is not an event
    END IF;
  END IF;

  FOREACH col IN ARRAY hidden LOOP
    old_j := old_j - col;
    new_j := new_j - col;
  END LOOP;

  INSERT INTO audit.events (actor, table_name, operation, row_key, session_id, old_row, new_row, changed_columns)
  VALUES (
    coalesce(nullif(current_setting('nomos.actor', true), ''), 'db:' || current_user),
    TG_TABLE_NAME,
    TG_OP,
    row_j ->> key_col,
    CASE WHEN TG_TABLE_NAME = 'sessions' THEN (row_j ->> 'id')::uuid
         ELSE (row_j ->> 'session_id')::uuid END,
    old_j,
    new_j,
    changed
  );
  RETURN NULL;
END;
$$;

CREATE FUNCTION audit.refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit.events is append-only: % is refused', TG_OP
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'The audit trail can only grow; nothing may edit or remove it.';
END;
$$;

CREATE TRIGGER audit_events_no_update_delete
  BEFORE UPDATE OR DELETE ON audit.events
  FOR EACH ROW EXECUTE FUNCTION audit.refuse_change();

CREATE TRIGGER audit_events_no_truncate
  BEFORE TRUNCATE ON audit.events
  FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_change();

-- attach(table, key column, hidden columns...) puts the row trigger on a table.
-- Later migrations call it for each domain table they create.
CREATE FUNCTION audit.attach(tbl regclass, key_col text, VARIADIC hidden text[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  args text := quote_literal(key_col);
  h    text;
BEGIN
  FOREACH h IN ARRAY hidden LOOP
    args := args || ', ' || quote_literal(h);
  END LOOP;
  EXECUTE format(
    'CREATE TRIGGER audit_row AFTER INSERT OR UPDATE OR DELETE ON %s
       FOR EACH ROW EXECUTE FUNCTION audit.record(%s)', tbl, args);
END;
$$;
