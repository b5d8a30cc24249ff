-- For npm run bench:claim-path -- --ab [--explain]: a candidate measured in round 4 and not kept
-- (docs/benchmarks.md): a row trigger function per audited table, made by audit.attach.
-- Written as a migration (160) would have been.
-- 160_audit_row_functions: each audited table gets a row trigger function of
-- its own, writing exactly the audit.events row audit.record (001) writes,
-- for less work per row (issue 20, round 4: the continuation's claim writes
-- four audited rows in one statement, and the trigger was about a fifth of
-- its time; most of that was not the INSERT into audit.events but building
-- what goes in it).
--
-- What audit.record did per row that a function of one table need not:
-- - an UPDATE's changed columns came from a query (jsonb_each over the new
--   row, a sort, array_agg): a whole executor run inside every UPDATE.
--   Here they are one expression over the table's columns, listed in the
--   order that query sorted them in (the database's default collation);
-- - the key column and hidden columns were read from the trigger's
--   arguments and the hidden ones removed one by one in a loop.
--
-- Exactly the same row, whatever happens to the table later:
-- - the comparison is the one audit.record made, of jsonb values
--   (new_j -> 'c' IS DISTINCT FROM old_j -> 'c'), never of typed columns,
--   so "changed" means what it meant (a dropped column is absent from
--   both sides: never listed, as before);
-- - a column added after the function was made (an ALTER TABLE without a
--   new audit.attach) is noticed per row (the new row minus the known
--   columns is not empty) and that row's changed columns are found the old
--   way, by the query; the row's old_row/new_row are to_jsonb() of the
--   whole row either way;
-- - actor, table name, operation, row key and session are computed as in
--   audit.record (TG_TABLE_NAME and the jsonb of the row, read at the time
--   the trigger fires). (Not kept, so the test that would write rows
--   through both and compare them column by column was never written.)
--
-- audit.record stays (the functions fall back to its query, and the
-- service role's lack of rights over it is tested); audit.attach now makes
-- the table's own function, so later migrations keep calling it as before.
-- Every audited table is attached again here, in this transaction: its
-- trigger (same name, same events, AFTER, FOR EACH ROW) is replaced by
-- CREATE OR REPLACE TRIGGER, so no write between the two is ever unaudited.

-- The source of tbl's row function: its columns (as they are now, sorted as
-- jsonb_each's keys were), its key column, its hidden columns.
CREATE FUNCTION audit.row_function_source(tbl regclass, key_col text, hidden text[])
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
  cols    text[];
  diff    text;
  drop_h  text := '';
BEGIN
  SELECT array_agg(a.attname::text ORDER BY a.attname::text COLLATE "default")
    INTO cols
    FROM pg_attribute a
   WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped;
  IF cols IS NULL THEN
    RAISE EXCEPTION 'audit.attach: % has no columns', tbl;
  END IF;
  IF NOT key_col = ANY (cols) THEN
    RAISE EXCEPTION 'audit.attach: % has no column % to use as the row key', tbl, key_col;
  END IF;
  SELECT string_agg(format('CASE WHEN new_j -> %1$L IS DISTINCT FROM old_j -> %1$L THEN %1$L END', c), E',\n        ' ORDER BY o)
    INTO diff
    FROM unnest(cols) WITH ORDINALITY AS u(c, o);
  IF cardinality(hidden) > 0 THEN
    drop_h := format(' - %L::text[]', hidden);
  END IF;
  RETURN format($src$
-- Made by audit.attach(%1$s, %2$L, ...) (migration 160): writes what audit.record writes.
DECLARE
  old_j   jsonb;
  new_j   jsonb;
  changed text[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    new_j := to_jsonb(NEW);
  ELSIF TG_OP = 'DELETE' THEN
    old_j := to_jsonb(OLD);
  ELSE
    old_j := to_jsonb(OLD);
    new_j := to_jsonb(NEW);
    IF new_j - %3$L::text[] = '{}'::jsonb THEN
      changed := array_remove(ARRAY[
        %4$s], NULL);
      IF cardinality(changed) = 0 THEN
        RETURN NULL; -- an UPDATE that changed nothing is not an event
      END IF;
    ELSE
      -- A column added since this function was made: the general way.
      SELECT array_agg(n.key ORDER BY n.key) INTO changed
        FROM jsonb_each(new_j) n
       WHERE n.value IS DISTINCT FROM old_j -> n.key;
      IF changed IS NULL THEN
        RETURN NULL;
      END IF;
    END IF;
  END IF;

  INSERT INTO audit.events (actor, table_name, operation, row_key, session_id, old_row, new_row, changed_columns)
  VALUES (
    coalesce(nullif(current_setting('nomos.actor', true), ''), 'db:' || current_user),
    TG_TABLE_NAME,
    TG_OP,
    coalesce(new_j, old_j) ->> %2$L,
    CASE WHEN TG_TABLE_NAME = 'sessions' THEN (coalesce(new_j, old_j) ->> 'id')::uuid
         ELSE (coalesce(new_j, old_j) ->> 'session_id')::uuid END,
    old_j%5$s,
    new_j%5$s,
    changed
  );
  RETURN NULL;
END;
$src$, tbl, key_col, cols, diff, drop_h);
END;
$$;

-- attach(table, key column, hidden columns...): (re)makes the table's row
-- function audit.row_<schema>_<table> and points its audit_row trigger at
-- it. Run it again after changing a table's columns (not required for
-- correctness: see above; it makes the table's UPDATEs fast again).
CREATE OR REPLACE FUNCTION audit.attach(tbl regclass, key_col text, VARIADIC hidden text[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  fn text;
BEGIN
  SELECT format('audit.%I', 'row_' || n.nspname || '_' || c.relname)
    INTO fn
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.oid = tbl;
  EXECUTE format('CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS %L',
                 fn, audit.row_function_source(tbl, key_col, hidden));
  EXECUTE format(
    'CREATE OR REPLACE TRIGGER audit_row AFTER INSERT OR UPDATE OR DELETE ON %s
       FOR EACH ROW EXECUTE FUNCTION %s()', tbl, fn);
END;
$$;

-- Every table audit.record is attached to now, with the arguments it was
-- attached with (the key column, then the hidden columns).
DO $$
DECLARE
  t    record;
  args text[];
BEGIN
  FOR t IN
    SELECT tg.tgrelid::regclass AS tbl, tg.tgnargs, tg.tgargs
      FROM pg_trigger tg
     WHERE tg.tgname = 'audit_row' AND NOT tg.tgisinternal
       AND tg.tgfoid = 'audit.record()'::regprocedure
     ORDER BY tg.tgrelid::regclass::text
  LOOP
    -- tgargs: the arguments, each ended by a zero byte (\000 once encoded;
    -- column names hold no backslash).
    args := (string_to_array(encode(t.tgargs, 'escape'), '\000'))[1:t.tgnargs];
    PERFORM audit.attach(t.tbl, args[1], VARIADIC coalesce(args[2:], '{}'::text[]));
  END LOOP;
END;
$$;
