-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY, the audit trigger building everything but skipping its INSERT:
CREATE OR REPLACE FUNCTION audit.record() RETURNS trigger
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
      RETURN NULL;
    END IF;
  END IF;
  FOREACH col IN ARRAY hidden LOOP
    old_j := old_j - col;
    new_j := new_j - col;
  END LOOP;
  RETURN NULL;
END;
$$;
