-- compose.yaml's db-roles step runs this as the PostgreSQL superuser on every
-- `docker compose up`: the service's own login role, nomos_app, which is no
-- superuser, may create nothing and owns nothing. The nomos-migrate step
-- then runs the migrations as the owner (NOMOS_DATABASE_OWNER_URL) and makes
-- nomos_app a member of nomos_service, whose grants migration 030 sets: read
-- and write the domain tables, only INSERT and SELECT on audit.events.
--
-- Idempotent: the role is created once; its attributes and password are set
-- every time, so a changed NOMOS_DB_PASSWORD takes effect on the next `up`.
-- The password arrives as the psql variable app_password (-v), quoted with
-- %L, never pasted into the SQL text.
\set ON_ERROR_STOP on

SELECT 'CREATE ROLE nomos_app'
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nomos_app')
\gexec

SELECT format(
  'ALTER ROLE nomos_app WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L',
  :'app_password')
\gexec
