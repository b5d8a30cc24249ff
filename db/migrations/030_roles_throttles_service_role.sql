-- 030_roles_throttles_service_role: who may do what, in the service and in
-- the database (issue 14).
--
-- 1. Operators get a role: viewer < operator < admin. The routes check it
--    (src/auth/roles.ts); the column's CHECK keeps the vocabulary closed.
--    Operators that exist when this runs could already do everything, so they
--    become admins: an upgrade takes nobody's powers away. New operators are
--    'operator' unless created as the first one (admin) or with a role.
-- 2. auth_throttles: failed logins and failed bearer tokens, counted per key
--    (a source address, a username), so every process sees the same counts
--    and a restart forgets nothing (src/auth/throttle.ts).
-- 3. nomos_service: the group role the service's login role belongs to. It
--    may read and write the domain tables, but on audit.events only INSERT
--    and SELECT: it can neither edit nor remove the trail, nor disable the
--    triggers that guard it (only a table's owner or a superuser may). The
--    owner (the role running migrations, NOMOS_DATABASE_OWNER_URL) keeps
--    every power; docs/reliability.md says what each role can do.
--
-- Locks: ADD COLUMN with a constant default is a catalog-only change in
-- PostgreSQL 11+, so operators is locked only for an instant.

SELECT set_config('nomos.actor', 'system:migration-030', true);

-- ─── 1. operator roles ──────────────────────────────────────────────────────

ALTER TABLE operators
  ADD COLUMN role text NOT NULL DEFAULT 'operator'
  CONSTRAINT operators_role_known CHECK (role IN ('viewer', 'operator', 'admin'));

UPDATE operators SET role = 'admin';

-- ─── 2. login and bearer throttling ─────────────────────────────────────────
-- Not audited: an attacker could otherwise grow the permanent trail with
-- every guess. Rows are counters, forgotten a day after their last failure.

CREATE TABLE auth_throttles (
  -- "addr:<address>", "user:<username>", "bearer:<address>".
  key             text PRIMARY KEY,
  failures        integer NOT NULL CHECK (failures >= 0),
  last_failure_at timestamptz NOT NULL,
  -- No attempt under this key is looked at before this time.
  blocked_until   timestamptz
);

CREATE INDEX auth_throttles_last_failure_idx ON auth_throttles (last_failure_at);

-- The wait after the n-th failure in a row: none for the first five, then
-- 2, 4, 8 ... seconds, never more than 15 minutes. Growing, never a lockout.
CREATE FUNCTION auth_throttle_delay(failures integer) RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN failures <= 5 THEN interval '0'
              ELSE make_interval(secs => least(900, power(2, least(failures - 5, 20))))
         END
$$;

-- ─── 3. the service's database role ─────────────────────────────────────────
-- Roles belong to the whole server, not to this database: nomos_service is
-- created once (when the migrating role may create roles) and reused. A
-- single-user setup whose owner may not create roles skips this part: the
-- service then runs as the owner, with the owner's powers (documented).

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_service')
     AND (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
    BEGIN
      CREATE ROLE nomos_service NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL; -- another database's migration created it at the same moment
    END;
  END IF;

  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_service') THEN
    RAISE NOTICE 'nomos_service not created (% may not create roles): the service must run as the owner', current_user;
    RETURN;
  END IF;

  GRANT USAGE ON SCHEMA public TO nomos_service;
  GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO nomos_service;
  GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO nomos_service;
  -- The ledger is read at start (are migrations pending?), never written.
  REVOKE INSERT, UPDATE, DELETE ON nomos_migrations FROM nomos_service;

  -- The trail: append and read, nothing else. No TRUNCATE, no TRIGGER, no
  -- ownership, so ALTER TABLE ... DISABLE TRIGGER is refused as well.
  GRANT USAGE ON SCHEMA audit TO nomos_service;
  REVOKE ALL ON audit.events FROM nomos_service;
  GRANT SELECT, INSERT ON audit.events TO nomos_service;
  GRANT SELECT ON audit.timeline TO nomos_service;

  -- Tables later migrations create (as this same owner) get the same grants.
  ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO nomos_service;
  ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO nomos_service;
END;
$$;
