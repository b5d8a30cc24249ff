-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY, never a proposal: the claim's tables without their audit triggers.
ALTER TABLE nomos_plan_executions DISABLE TRIGGER audit_row;
ALTER TABLE assent_windows DISABLE TRIGGER audit_row;
ALTER TABLE turns DISABLE TRIGGER audit_row;
ALTER TABLE messages DISABLE TRIGGER audit_row;
