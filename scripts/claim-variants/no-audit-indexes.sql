-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY: audit.events without its two secondary indexes.
DROP INDEX audit.audit_events_session_idx;
DROP INDEX audit.audit_events_table_key_idx;
