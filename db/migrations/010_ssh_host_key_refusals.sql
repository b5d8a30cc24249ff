-- 010_ssh_host_key_refusals: every SSH connection refused because the host
-- presented a key other than the pinned one. Why a table: the refusal is a
-- security event the operator must be able to find later (the audit trigger
-- records who/when in audit.events as well), and the agent is told plainly.
-- Only fingerprints are stored, never keys.
CREATE TABLE ssh_host_key_refusals (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  target             text NOT NULL,
  host               text NOT NULL,
  port               integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
  expected_sha256    text NOT NULL,
  presented_sha256   text NOT NULL,
  at                 timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ssh_host_key_refusals_target_idx ON ssh_host_key_refusals (target, at);
SELECT audit.attach('ssh_host_key_refusals', 'id');
