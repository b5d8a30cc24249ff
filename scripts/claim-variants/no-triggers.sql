-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY: every trigger on the claim's five tables off (audit, FKs, the message counter).
ALTER TABLE nomos_plan_executions DISABLE TRIGGER ALL;
ALTER TABLE assent_windows DISABLE TRIGGER ALL;
ALTER TABLE turns DISABLE TRIGGER ALL;
ALTER TABLE messages DISABLE TRIGGER ALL;
ALTER TABLE session_events DISABLE TRIGGER ALL;
