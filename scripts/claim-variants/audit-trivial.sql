-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY, the audit trigger that does nothing:
CREATE OR REPLACE FUNCTION audit.record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
