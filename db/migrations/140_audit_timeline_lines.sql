-- 140_audit_timeline_lines: audit.timeline (003) learns to tell the tables
-- added since it was written: a plan's checklist (plan_steps), each model
-- call's usage (model_calls), safety-net snapshots (guest_snapshots),
-- notifications, and a session renamed or archived. Until now those fell
-- back to the generic "<operation> <table> <key> (<columns>)" line.
--
-- The view still only reads audit.events and adds no state; its columns are
-- unchanged (CREATE OR REPLACE keeps grants and dependants). Notification
-- deliveries carry no session, so they stay in the generic line, outside a
-- session's story.

CREATE OR REPLACE VIEW audit.timeline AS
SELECT
  e.id,
  e.at,
  e.session_id,
  e.actor,
  e.table_name,
  e.operation,
  e.row_key,
  CASE
    WHEN e.table_name = 'executions' AND e.operation = 'INSERT' THEN
      format('execution %s on %s queued as %s (%s): %s',
             left(e.row_key, 8), e.new_row ->> 'target', e.new_row ->> 'status',
             e.new_row ->> 'risk', left(e.new_row ->> 'command', 120))
    WHEN e.table_name = 'executions' AND 'status' = ANY (e.changed_columns) THEN
      format('execution %s on %s: %s -> %s%s',
             left(e.row_key, 8), e.new_row ->> 'target',
             e.old_row ->> 'status', e.new_row ->> 'status',
             CASE WHEN e.new_row ->> 'exit_code' IS NOT NULL
                  THEN format(' (exit %s)', e.new_row ->> 'exit_code') ELSE '' END
             || CASE WHEN e.new_row ->> 'error' IS NOT NULL
                  THEN format(': %s', left(e.new_row ->> 'error', 120)) ELSE '' END)
    WHEN e.table_name = 'approvals' AND e.operation = 'INSERT' THEN
      format('approval %s requested for %s %s',
             left(e.row_key, 8), e.new_row ->> 'kind',
             left(coalesce(e.new_row ->> 'plan_id', e.new_row ->> 'execution_id'), 8))
    WHEN e.table_name = 'approvals' AND 'status' = ANY (e.changed_columns) THEN
      format('approval %s %s by %s via %s',
             left(e.row_key, 8), e.new_row ->> 'status',
             coalesce(e.new_row ->> 'decided_by', e.actor), coalesce(e.new_row ->> 'decided_via', '?'))
    WHEN e.table_name = 'plans' AND e.operation = 'INSERT' THEN
      format('plan %s proposed: %s (%s steps)',
             left(e.row_key, 8), left(e.new_row ->> 'goal', 120),
             jsonb_array_length(e.new_row -> 'steps'))
    WHEN e.table_name = 'plans' AND 'status' = ANY (e.changed_columns) THEN
      format('plan %s: %s -> %s', left(e.row_key, 8), e.old_row ->> 'status', e.new_row ->> 'status')
    WHEN e.table_name = 'assent_windows' AND e.operation = 'INSERT' THEN
      format('assent window opened until %s, scope %s',
             e.new_row ->> 'expires_at', e.new_row ->> 'scope_targets')
    WHEN e.table_name = 'assent_windows' AND 'closed_at' = ANY (e.changed_columns) THEN
      format('assent window closed (%s)', e.new_row ->> 'close_reason')
    WHEN e.table_name = 'assent_windows' AND 'expires_at' = ANY (e.changed_columns) THEN
      format('assent window extended until %s', e.new_row ->> 'expires_at')
    WHEN e.table_name = 'turns' AND e.operation = 'INSERT' THEN
      format('%s turn %s queued', e.new_row ->> 'kind', left(e.row_key, 8))
    WHEN e.table_name = 'turns' AND 'status' = ANY (e.changed_columns) THEN
      format('%s turn %s: %s -> %s%s', e.new_row ->> 'kind', left(e.row_key, 8),
             e.old_row ->> 'status', e.new_row ->> 'status',
             CASE WHEN e.new_row ->> 'error' IS NOT NULL
                  THEN format(': %s', left(e.new_row ->> 'error', 120)) ELSE '' END)
    WHEN e.table_name = 'messages' AND e.operation = 'INSERT' THEN
      format('%s message %s', e.new_row ->> 'kind', e.row_key)
    WHEN e.table_name = 'nomos_plan_executions' AND 'continued_at' = ANY (e.changed_columns) THEN
      format('execution %s claimed for continuation by %s',
             left(e.row_key, 8), e.new_row ->> 'claimed_by')
    WHEN e.table_name = 'targets' AND e.operation = 'INSERT' THEN
      format('target %s registered (%s)', e.row_key, e.new_row ->> 'kind')
    -- 140: the tables added since 003 (plan checklist, usage, snapshots,
    -- notifications, archived sessions).
    WHEN e.table_name = 'plan_steps' AND e.operation = 'INSERT' THEN
      format('plan %s step %s listed', left(e.new_row ->> 'plan_id', 8), e.new_row ->> 'position')
    WHEN e.table_name = 'plan_steps' AND 'status' = ANY (e.changed_columns) THEN
      format('plan %s step %s: %s -> %s%s', left(e.new_row ->> 'plan_id', 8), e.new_row ->> 'position',
             e.old_row ->> 'status', e.new_row ->> 'status',
             CASE WHEN e.new_row ->> 'note' IS NOT NULL
                  THEN format(': %s', left(e.new_row ->> 'note', 120)) ELSE '' END)
    WHEN e.table_name = 'model_calls' AND e.operation = 'INSERT' THEN
      format('model call to %s: %s tokens in, %s out%s', e.new_row ->> 'model',
             (e.new_row ->> 'input_tokens')::bigint + (e.new_row ->> 'cache_read_tokens')::bigint
               + (e.new_row ->> 'cache_write_tokens')::bigint,
             e.new_row ->> 'output_tokens',
             CASE WHEN e.new_row ->> 'cost_usd' IS NOT NULL
                  THEN format(', about $%s', round((e.new_row ->> 'cost_usd')::numeric, 4)) ELSE '' END)
    WHEN e.table_name = 'guest_snapshots' AND e.operation = 'INSERT' THEN
      format('snapshot %s of %s %s on %s: %s%s', e.new_row ->> 'name', e.new_row ->> 'kind',
             e.new_row ->> 'vmid', e.new_row ->> 'node', e.new_row ->> 'state',
             CASE WHEN e.new_row ->> 'reason' IS NOT NULL
                  THEN format(' (%s)', left(e.new_row ->> 'reason', 120)) ELSE '' END)
    WHEN e.table_name = 'guest_snapshots' AND 'state' = ANY (e.changed_columns) THEN
      format('snapshot %s of %s %s on %s: %s -> %s', e.new_row ->> 'name', e.new_row ->> 'kind',
             e.new_row ->> 'vmid', e.new_row ->> 'node', e.old_row ->> 'state', e.new_row ->> 'state')
    WHEN e.table_name = 'notifications' AND e.operation = 'INSERT' THEN
      format('notification %s (%s): %s', left(e.row_key, 8), e.new_row ->> 'type', left(e.new_row ->> 'title', 120))
    WHEN e.table_name = 'sessions' AND 'archived_at' = ANY (e.changed_columns) THEN
      'session archived (deleted from the page)'
    WHEN e.table_name = 'sessions' AND 'title' = ANY (e.changed_columns) THEN
      format('session renamed to "%s"', left(e.new_row ->> 'title', 120))
    ELSE
      format('%s %s %s%s', lower(e.operation), e.table_name, left(e.row_key, 36),
             CASE WHEN e.changed_columns IS NOT NULL
                  THEN format(' (%s)', array_to_string(e.changed_columns, ', ')) ELSE '' END)
  END AS what
FROM audit.events e
ORDER BY e.id;
