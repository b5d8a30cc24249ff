-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY: the claim's foreign-key checks off.
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT tgrelid::regclass AS t, tgname FROM pg_trigger
            WHERE tgname LIKE 'RI_ConstraintTrigger_c_%' AND tgrelid::regclass::text IN ('nomos_plan_executions','turns','messages','session_events','assent_windows') LOOP
    EXECUTE format('ALTER TABLE %s DISABLE TRIGGER %I', r.t, r.tgname);
  END LOOP;
END $$;
